# rules: CFG302 CFG301 CFG303
import deepspeed

# A DeepSpeed config built in Python, as DeepSpeedExamples' training scripts do.
ds_config = {
    "train_batch_size": 16,
    'optimizer': {"type": "OneBitAdam", "params": {"lr": 1e-3, 'comm_backend_name': 'nccl'}},
    "zero_optimization": {"stage": 2, "zero_quantized_weights": True},
    "amp": {"enabled": True},
}
not_a_config = {"optimizer": {"type": "Lamb"}, "comm_backend_name": "nccl"}
engine, *_ = deepspeed.initialize(model=None, config=ds_config)
# output
import deepspeed

# A DeepSpeed config built in Python, as DeepSpeedExamples' training scripts do.
ds_config = {
    "train_batch_size": 16,
    'optimizer': {"type": "OneBitAdam", "params": {"lr": 1e-3, 'comm_backend_name': 'hccl'}},
    "zero_optimization": {"stage": 2, "zero_quantized_weights": True},
    "amp": {"enabled": True},
}
not_a_config = {"optimizer": {"type": "Lamb"}, "comm_backend_name": "nccl"}
engine, *_ = deepspeed.initialize(model=None, config=ds_config)
