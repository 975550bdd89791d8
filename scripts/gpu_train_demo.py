"""A small real training run for trying gpu-tui's job features on a GPU machine.

`python3 scripts/gpu_train_demo.py [SECONDS]`: fits a 2-layer MLP on random data with PyTorch on
the GPU, printing a tqdm-style bar (`\\r` redraws) and `epoch N | loss X` lines, for about
SECONDS (default 60). Needs torch with CUDA. Not used by the tests.
"""

import sys
import time

import torch

seconds = float(sys.argv[1]) if len(sys.argv) > 1 else 60.0
dev = "cuda"
x = torch.randn(65536, 1024, device=dev)
# a noisy target, so the loss falls for a while and then levels off, as real ones do
y = ((x[:, :8].sum(1, keepdim=True) + 2.0 * torch.randn(x.shape[0], 1, device=dev)) > 0).float()
model = torch.nn.Sequential(torch.nn.Linear(1024, 4096), torch.nn.ReLU(), torch.nn.Linear(4096, 1)).to(dev)
opt = torch.optim.Adam(model.parameters(), lr=1e-4)
steps_per_epoch, epoch, start = 200, 0, time.time()
while time.time() - start < seconds:
    epoch += 1
    epoch_start = time.time()
    for step in range(1, steps_per_epoch + 1):
        idx = torch.randint(0, x.shape[0], (4096,), device=dev)
        loss = torch.nn.functional.binary_cross_entropy_with_logits(model(x[idx]), y[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        if step % 10 == 0:
            torch.cuda.synchronize()
            pct = 100 * step // steps_per_epoch
            el = time.time() - start
            rate = step / max(time.time() - epoch_start, 1e-3)
            sys.stdout.write(
                f"\rEpoch {epoch}: {pct:3d}%|{'#' * (pct // 10):<10}| {step}/{steps_per_epoch} "
                f"[{int(el) // 60:02d}:{int(el) % 60:02d}<00:00, {rate:.2f}it/s, loss={loss.item():.4f}]"
            )
            sys.stdout.flush()
    print(f"\nepoch {epoch} | loss {loss.item():.4f}", flush=True)
print("done")
