# rules: NPU801 NPU801 NPU801 NPU801 NPU801 NPU801
import os
import subprocess

os.environ["CUDA_VISIBLE_DEVICES"] = "0,1"
conf = os.environ.get("PYTORCH_CUDA_ALLOC_CONF", "")
os.environ.setdefault("TORCH_NCCL_BLOCKING_WAIT", "1")
if "NCCL_SOCKET_IFNAME" in os.environ:
    pass
subprocess.run(["python", "train.py"], env={"CUDA_VISIBLE_DEVICES": "0"})
visible = os.getenv('CUDA_VISIBLE_DEVICES')
# output
import os
import subprocess

os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0,1"
conf = os.environ.get("PYTORCH_NPU_ALLOC_CONF", "")
os.environ.setdefault("TORCH_HCCL_BLOCKING_WAIT", "1")
if "HCCL_SOCKET_IFNAME" in os.environ:
    pass
subprocess.run(["python", "train.py"], env={"ASCEND_RT_VISIBLE_DEVICES": "0"})
visible = os.getenv('ASCEND_RT_VISIBLE_DEVICES')
