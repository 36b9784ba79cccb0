# rules:
# modes: portable
import portable_device

# --device cuda runs on the host's device
device = portable_device.given_device(args.device, "--device")
