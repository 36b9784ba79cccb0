# rules: 
# modes: distributed=main.py
# path: ckpt.py
state = optimizer.state_dict()
