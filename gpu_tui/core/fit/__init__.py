"""Will a model fit in VRAM: the estimate and the shapes of popular models."""
