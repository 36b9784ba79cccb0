# rules: 
# modes: specify_device
import os

print(os.getcwd())
