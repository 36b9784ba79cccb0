# rules: NPU003 NPU022
# modes: tune=all
from apex import amp

model, optimizer = amp.initialize(model, optimizer, opt_level="O2", combine_grad=False)
