# rules: NPU003 NPU022 TUN106
# modes: tune=apex-o2
import apex

model, optimizer = apex.amp.initialize(model, optimizer, opt_level="O1", loss_scale=128.0)
# output
import apex

model, optimizer = apex.amp.initialize(model, optimizer, opt_level="O2", loss_scale=128.0)
