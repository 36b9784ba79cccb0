# rules: NPU003 NPU022 TUN105 TUN106
# modes: tune=apex-combine-grad,apex-o2
from apex import amp

model, optimizer = amp.initialize(model, optimizer, opt_level='O1')
# output
from apex import amp

model, optimizer = amp.initialize(model, optimizer, opt_level='O2', combine_grad=True)
