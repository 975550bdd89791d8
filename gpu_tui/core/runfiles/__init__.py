"""A run's own metrics files, bytes to series: TensorBoard event files, HF Trainer's
trainer_state.json, Lightning's metrics.csv, MLflow's file and sqlite stores.

Pure parsing (core does no I/O): readers take bytes or text and return `model.Series`. The
modules load on python3.6 once services/notify/bundle.py's rewriting has dropped their
annotations, so the instance can run them: stdlib only, no walrus, no match, no
`str.removeprefix`, no dataclasses (3.7+), no runtime `X | Y` or `list[int]`.
"""
