# rules: CFG103 CFG103
#!/bin/bash
deepspeed train.py --optim adamw_apex_fused --output_dir out
python train.py --optim='adamw_apex_fused'
# output
#!/bin/bash
deepspeed train.py --optim adamw_torch_npu_fused --output_dir out
python train.py --optim='adamw_torch_npu_fused'
