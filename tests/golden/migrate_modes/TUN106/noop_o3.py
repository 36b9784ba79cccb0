# rules: NPU003 NPU022
# modes: tune=apex-o2
from apex import amp

model, optimizer = amp.initialize(model, optimizer, opt_level="O3")
