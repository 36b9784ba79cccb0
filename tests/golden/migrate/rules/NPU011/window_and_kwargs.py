# rules: NPU003 NPU011 NPU011 NPU011
from flash_attn import flash_attn_func


def attend(q, k, v, options):
    local = flash_attn_func(q, k, v, causal=True, window_size=(128, 0))
    passed = flash_attn_func(q, k, v, **options)
    return local, passed, flash_attn_func(q, k, v, causal=options["causal"])
