# rules: CFG110
#!/bin/bash
accelerate launch --dynamo_backend inductor train.py
