"""Real log excerpts from public issue threads: each gives the right catalogue entry, and the fix
the catalogue gives names the remedy the thread settled on (where it settled on one).

Each case: the thread, the lines quoted from it (as a rank's log), the entry, and words of the
remedy that the entry's fix (or the out-of-memory advice) must name.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

import pytest

from ascendify.explain import explain_paths
from ascendify.explain.catalogue import has_anchor, load


class Case(NamedTuple):
    source: str
    log: str
    entry: str
    remedy: tuple[str, ...] = ()


CASES = [
    Case(
        "https://github.com/Ascend/pytorch/issues/66",
        "RuntimeError: operator():build/CMakeFiles/torch_npu.dir/compiler_depend.ts:25 NPU function "
        "error: c10_npu::acl::AclrtSynchronizeStreamWithTimeout(copy_stream), error code is 507035\n"
        "[ERROR] 2025-04-29-18:46:11 (PID:1066924, Device:1, RankID:-1) ERR00100 PTA call acl api failed\n"
        "[Error]: The vector core execution is abnormal. \n",
        "ACL507035",
        ("plog", "latest torch_npu"),  # the maintainers' answer in vllm-ascend#2630
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/5043",
        "[W1215 11:30:10.136265096 NPUStream.cpp:545] Warning: NPU warning, error code is 507035[Error]:\n"
        "[Error]: The vector core execution is abnormal.\n",
        "ACL507035",
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/16234",
        "[ERROR] RUNTIME(2089224,):2026-08-27-08:35:04.951.443 [engine.cc:142]2089317 SubmitTask:context is abort, status=0x715005e.\n"
        "[ERROR] ASCENDCL(2089224,):2026-08-27-08:35:04.951.525 [event.cpp:197]2089224 aclrtSynchronizeEventImpl:wait event to be complete failed, runtime result = 507035\n",
        "ACL507035",
    ),
    Case(
        "https://github.com/deepspeedai/DeepSpeed/issues/6555",
        "RuntimeError: ACL stream synchronize failed, error code 507015\n",
        "ACL507015",
        ("torch_npu",),  # "something wrong in torch_npu"
    ),
    Case(
        "https://github.com/tile-ai/tilelang-ascend/issues/82",
        "RuntimeError: npuSynchronizeDevice:torch_npu/csrc/core/npu/NPUStream.cpp:506 NPU function "
        "error: AclrtSynchronizeDeviceWithTimeout, error code is 507015\n"
        "[ERROR] 2025-11-08-21:35:27 (PID:1234255, Device:0, RankID:-1) ERR00100 PTA call acl api failed\n"
        "[Error]: The aicore execution is abnormal. \n",
        "ACL507015",
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/4914",
        "(Worker_DP0_TP7_EP7 pid=2112) ERROR 12-11 09:09:33 [multiproc_executor.py:822] RuntimeError: "
        "ACL stream synchronize failed, error code:507014\n",
        "ACL507014",
        ("latest release",),  # "resolved in the latest version"
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/1443",
        "RuntimeError: npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:479 NPU "
        "function error: AclrtSynchronizeDeviceWithTimeout, error code is 507048\n"
        "[ERROR] 2025-06-25-10:45:23 (PID:13075, Device:0, RankID:8) ERR00100 PTA call acl api failed\n"
        "[Error]: The execution of the internal task times out. \n"
        "EI0002: [PID: 13075] 2025-06-25-10:45:23.586.187 The wait execution of the Notify register "
        "times out. Reason: The Notify register has not received the Notify record from remote rank: [unknown].\n",
        "ACL507048",
        ("rank that failed first", "HCCL_EXEC_TIMEOUT"),
    ),
    Case(
        "https://github.com/open-mmlab/mmcv/issues/3203",
        "RuntimeError: Run:/usr1/workspace/FPTA_Daily_Plugin_open_date/Plugin/torch_npu/csrc/framework/"
        "OpParamMaker.cpp:128 NPU error,NPU error code is:100000 EZ9999: Inner Error, Please contact "
        "support engineer! EZ9999 Kernel task happen error, retCode=0x2a, [aicpu exception].\n",
        "ACL507018",
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/116",
        "RuntimeError: copy_d2d:torch_npu/csrc/aten/common/CopyKernel.cpp:274 NPU function error: "
        "c10_npu::acl::AclrtSynchronizeStreamWithTimeout(copy_stream), error code is 507001\n",
        "ACL507001",
        ("PYTORCH_NPU_ALLOC_CONF=expandable_segments:False",),
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/2210",
        "RuntimeError: SetPrecisionMode:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:155 NPU "
        "function error: at_npu::native::AclSetCompileopt(aclCompileOpt::ACL_PRECISION_MODE, "
        "precision_mode), error code is 500001\n"
        "[ERROR] 2025-08-05-08:05:26 (PID:504068, Device:0, RankID:-1) ERR00100 PTA call acl api failed\n"
        "[Error]: The internal ACL of the system is incorrect.\n",
        "ACL500001",
        ("numpy<2",),
    ),
    Case(
        "https://github.com/Ascend/pytorch/issues/7",
        "EH9999: Inner Error!\n"
        "EH9999  [Init][Env]init env failed![FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]\n"
        "        build op model failed, result = 500001[FUNC:ReportInnerError][FILE:log_inner.cpp][LINE:145]\n",
        "ACL500001",
        ("decorator", "sympy"),  # "dependencies not fully installed"
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/4859",
        "(EngineCore_DP0 pid=3473945) ERROR 12-10 10:52:09 [patch_core.py:58] RuntimeError: zero_:build/"
        "CMakeFiles/torch_npu.dir/compiler_depend.ts:26 NPU function error: call aclnnInplaceZero "
        "failed, error code is 561103\n",
        "ACL561103",
        ("matches the driver",),  # "CANN version needs to match device version"
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/3046",
        "RuntimeError: arange_out_op_api:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:36 NPU "
        "function error: call aclnnArange failed, error code is 561103\n"
        "EZ9999: [PID: 5625] 2025-09-19-14:34:08.166.059 Parse dynamic kernel config fail.\n",
        "ACL561103",
        ("image built for this chip",),  # a 910B image on a 910C
    ),
    Case(
        "https://github.com/flashserve/flash-linear-attention-npu/issues/333",
        "RuntimeError: aclnnCausalConv1dGetWorkspaceSize failed with aclnnStatus=561002.\n",
        "ACL561002",
        ("environment variables",),
    ),
    Case(
        "https://github.com/sgl-project/sglang/issues/10615",
        "RuntimeError: NPU function error: call aclnnCat failed, error code is 161002\n",
        "ACL161002",
    ),
    Case(
        "https://github.com/Ascend/pytorch/issues/72",
        "npuSynchronizeDevice:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:506 NPU function error: "
        "AclrtSynchronizeDeviceWithTimeout, error code is 107020\n"
        "[ERROR] 2025-07-13-21:24:03 (PID:474, Device:2, RankID:2) ERR00100 PTA call acl api failed.\n",
        "ACL107020",
        ("per-rank", "sharded"),  # MOVA PR #68, accelerate PR #4105
    ),
    Case(
        "https://github.com/hw-native-sys/PTOAS/pull/341",
        "[ERROR] aclrtSetDevice(deviceId) failed: 507033 (main.cpp:68)\n"
        "[ERROR] RecentErrMsg: [PID: 1604822] 2026-03-24-12:13:53.809.770 "
        "Memory_Allocation_Failure(EL0004): Failed to allocate memory.\n",
        "ACL507033",
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/10829",
        "(EngineCore_DP0 pid=36528) RuntimeError: Worker failed with error 'operator():build/CMakeFiles/"
        "torch_npu.dir/compiler_depend.ts:47 NPU function error: SUSPECT REMOTE ERROR, error code is 507057\n",
        "ACL507057",
        ("other ranks",),
    ),
    Case(
        "https://github.com/modelscope/ms-swift/issues/9135",
        "enable_peer_access:torch_npu/csrc/core/npu/NPUPeerToPeerAccess.cpp:39 NPU function error: "
        "aclrtDeviceEnablePeerAccess(dest_dev, enable_flag_value), error code is 507899\n",
        "ACL507899",
    ),
    Case(
        "https://github.com/zai-org/GLM-OCR/issues/232",
        "       The extend info: errcode:(0x800000, 0, 0) errorStr: The DDR address of the MTE "
        "instruction is out of range. fixp_error0 info: 0x30296b9\n",
        "ACL-MTE-OOR",
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/8981",
        "RuntimeError: NPU function error: aclrtPointerGetAttributes, error code is 107000\n",
        "ACL107000",
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/3413",
        "EI0002: [PID: 2969] 2025-10-11-15:09:34.713.335 The wait execution of the Notify register "
        "times out. Reason: The Notify register has not received the Notify record from remote rank: [24].\n",
        "HCCL-EI0002",
        ("other ranks", "HCCL_EXEC_TIMEOUT"),  # the message's own solution
    ),
    Case(
        "https://github.com/InternLM/lmdeploy/issues/3354",
        "EI0002: [PID: 198748] 2025-03-26-13:49:01.670.614 The wait execution of the Notify register "
        "times out. Reason: The Notify register has not received the Notify record from remote rank: [unknown].\n",
        "HCCL-EI0002",
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/486",
        "[rank1]: RuntimeError: InnerRunOpApi:torch_npu/csrc/framework/OpParamMaker.cpp:281 OPS function "
        "error: HcclAllreduce, error code is 6\n"
        "[rank1]: [ERROR] 2025-04-08-18:07:20 (PID:1292363, Device:1, RankID:1) ERR01100 OPS call acl api failed.\n"
        "[rank1]: EI0006: [PID: 1292363] 2025-04-08-18:07:20.444.436 Getting socket times out. Reason: "
        "Remote Rank did not send the data in time. Please check the reason for the rank being stuck\n",
        "HCCL-EI0006",
        ("HCCL_CONNECT_TIMEOUT",),
    ),
    Case(
        "https://github.com/vllm-project/afd-plugin/issues/229",
        "RuntimeError: Communication_Error_Get_Socket(EI0006)\n",
        "HCCL-EI0006",
        ("HCCL_CONNECT_TIMEOUT",),  # "export HCCL_CONNECT_TIMEOUT=900 appears to mitigate"
    ),
    Case(
        "https://github.com/Ascend/pytorch/issues/54",
        "RuntimeError: ACL stream synchronize failed.\n"
        "EI9999: Inner Error!\n"
        "EI9999: 2024-10-21-10:42:00.358.410  The error from device(chipId:3, dieId:0), serial number "
        "is 9, hccl fftsplus task timeout occurred during task execution, stream_id:5, timeout:30min(default).\n",
        "HCCL-EI9999-FFTS",
        ("HCCL_EXEC_TIMEOUT",),
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/382",
        "[rank1]:[E324 13:00:25.428029551 compiler_depend.ts:574] [Rank 1] Watchdog caught collective "
        "operation timeout: WorkHCCL(SeqNum=196, OpType=ALLREDUCE, Timeout(ms)=3600000) ran for 3600185 "
        "milliseconds before timing out.\n",
        "HCCL-WATCHDOG",
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/672",
        "[rank1]: RuntimeError: create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:102 HCCL "
        "function error: hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, "
        "&(comm->hcclComm_)), error code is 15\n"
        "[rank1]: [ERROR] 2025-04-27-03:11:08 (PID:540989, Device:0, RankID:1) ERR02200 DIST call hccl api failed.\n",
        "HCCL-15",
        ("CANN 8.1.RC1",),  # "使用CANN 8.1.rc1 版本，已修复此bug"
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/2712",
        "(VllmWorker rank=1 pid=7226) ERROR 09-03 03:02:37 [multiproc_executor.py:522] RuntimeError: "
        "create_config:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:148 HCCL function error: "
        "hcclCommInitRootInfoConfig(numRanks, &rootInfo, rank, config, &(comm->hcclComm_)), error code is 1\n",
        "HCCL-1",
    ),
    Case(
        "https://github.com/gpustack/gpustack/issues/2021",
        "[ERROR] HCCL(36035,mindie_llm_backend_connector):2025-05-13-02:25:58.068.817 [op_base.cc:974]"
        "[36818][Init][CommRootInfoConfig]errNo[0x0000000005000002]HcclCommInitRootInfo failed.\n",
        "HCCL-ROOTINFO",
        ("hccl_test",),  # "use the HCCL test tool in CANN to test HCCL"
    ),
    Case(
        "https://github.com/xingchensong/TouchNet/issues/100",
        "RuntimeError: NPU out of memory. Tried to allocate 5.03 GiB (NPU 3; 60.96 GiB total capacity; "
        "49.47 GiB already allocated; 49.47 GiB current active; 1.32 GiB free; 57.55 GiB reserved in "
        "total by PyTorch) If reserved memory is >> allocated memory try setting max_split_size_mb to "
        "avoid fragmentation.\n",
        "NPU-OOM",
        ("PYTORCH_NPU_ALLOC_CONF=expandable_segments:True",),
    ),
    Case(
        "https://github.com/sgl-project/sglang/issues/29838",
        "torch.OutOfMemoryError: NPU out of memory. Tried to allocate 72.00 MiB (NPU 0; 61.27 GiB total "
        "capacity; 56.05 GiB already allocated; 56.05 GiB current active; 5.04 MiB free; 58.39 GiB "
        "reserved in total by PyTorch).If reserved memory is >> allocated memory try setting "
        "max_split_size_mb to avoid fragmentation.\n",
        "NPU-OOM",
    ),
    Case(
        "https://github.com/flashserve/flash-linear-attention-npu/issues/149",
        "NPU out of memory. Tried to allocate more than 1EB memory\n",
        "NPU-OOM-HUGE",
        ("pure-torch path",),  # "走纯torch实现的分支就没问题"
    ),
    Case(
        "https://github.com/jhc13/taggui/issues/188",
        "torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 MiB. GPU 0 has a total "
        "capacity of 4.00 GiB of which 2.35 GiB is free. Of the allocated memory 825.15 MiB is "
        "allocated by PyTorch, and 24.85 MiB is reserved by PyTorch but unallocated. If reserved but "
        "unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to "
        "avoid fragmentation. See documentation for Memory Management\n",
        "CUDA-OOM",
        ("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True",),
    ),
    Case(
        "https://github.com/pytorch/pytorch/issues/42077",
        "RuntimeError: CUDA error: an illegal memory access was encountered\n"
        "CUDA kernel errors might be asynchronously reported at some other API call, so the stacktrace "
        "below might be incorrect.\n",
        "CUDA-ILLEGAL-ADDRESS",
        ("CUDA_LAUNCH_BLOCKING=1",),
    ),
    Case(
        "https://github.com/facebookresearch/detectron2/issues/4158",
        "RuntimeError: CUDA error: device-side assert triggered\n",
        "CUDA-DEVICE-ASSERT",
    ),
    Case(
        "https://github.com/hustvl/Vim/issues/42",
        "CUDA error: no kernel image is available for execution on the device\n",
        "CUDA-NO-KERNEL",
        ("compute capability",),
    ),
    Case(
        "https://github.com/huggingface/accelerate/issues/2375",
        "[rank5]:[E ProcessGroupNCCL.cpp:523] [Rank 5] Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=167, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for "
        "600272 milliseconds before timing out.\n",
        "NCCL-WATCHDOG",
    ),
    Case(
        "https://github.com/NVIDIA/nccl/issues/473",
        "RuntimeError: NCCL Error 2: unhandled system error\n",
        "NCCL-SYSTEM",
        ("--ipc=host",),
    ),
    Case(
        "https://github.com/pytorch/pytorch/issues/37004",
        "node08:27106:27302 [0] include/shm.h:27 NCCL WARN Call to shm_open failed : Permission denied\n"
        "RuntimeError: NCCL error in ProcessGroupNCCL.cpp:290, unhandled system error\n",
        "NCCL-SHM-OPEN",  # the warning that says which system call failed
        ("/dev/shm writable",),  # "sudo chmod 777 /dev/shm and the problem is gone"
    ),
    Case(
        "https://github.com/NVIDIA/nccl/issues/2076",
        "torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
        "NCCLUtils.hpp:268, remote process exited or there was a network error, NCCL version 2.21.5\n",
        "NCCL-REMOTE",
        ("InfiniBand",),  # "Some of the nodes had IB (infiniband) issues"
    ),
    Case(
        "https://github.com/tatsu-lab/stanford_alpaca/issues/207",
        "what(): NCCL error: remote process exited or there was a network error, NCCL version 2.14.3 "
        "ncclRemoteError: A call failed possibly due to a network error or a remote process exiting "
        "prematurely. Last error: NET/IB : Got completion from peer 11.214.147.122<39138> with error 12, "
        "opcode 0, len 0, vendor err 129\n",
        "NCCL-IB",
    ),
    Case(
        "https://github.com/pytorch/pytorch/issues/75512",
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:598] Connection closed by peer "
        "[18.25.6.30]:28048\n",
        "GLOO-CLOSED",
    ),
    Case(
        "https://github.com/RVC-Project/Retrieval-based-Voice-Conversion-WebUI/issues/1882",
        "RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:589] Read error "
        "[192.168.70.92]:25266: Connection reset by peer\n",
        "GLOO-RESET",
    ),
    Case(
        "https://github.com/sgl-project/sglang/issues/3226",
        "RuntimeError: Gloo connectFullMesh failed with [../third_party/gloo/gloo/transport/tcp/pair.cc:144] no error\n",
        "GLOO-FULLMESH",
    ),
    Case(
        "https://github.com/xdit-project/mochi-xdit/issues/22",
        "RuntimeError: The server socket has failed to listen on any local network address. port: 29500, "
        "useIpv6: 0, code: -98, name: EADDRINUSE, message: address already in use\n",
        "DIST-ADDRINUSE",
        ("MASTER_PORT",),
    ),
    Case(
        "https://github.com/hkchengrex/STCN/issues/132",
        "RuntimeError: DataLoader worker (pid 46794) is killed by signal: Bus error. It is possible that "
        "dataloader's workers are out of shared memory. Please try to raise your shared memory limit.\n",
        "DATALOADER-SHM",
        ("--shm-size",),
    ),
    Case(
        "https://github.com/facebookresearch/mmf/issues/441",
        "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
        "memory (shm).\n",
        "DATALOADER-SHM",
    ),
    Case(
        "https://github.com/open-mmlab/mmrotate/issues/501",
        "RuntimeError: DataLoader worker (pid 25902) is killed by signal: Killed\n",
        "DATALOADER-KILLED",
        ("more memory",),  # "change my machine to 4 core / 24G memory"
    ),
    Case(
        "https://github.com/MhLiao/DB/issues/94",
        "RuntimeError: DataLoader worker (pid 25902) is killed by signal: Segmentation fault\n",
        "DATALOADER-SEGV",
    ),
    Case(
        "https://github.com/open-mmlab/mmdetection/pull/4742",
        "RuntimeError: Expected to have finished reduction in the prior iteration before starting a new "
        "one. This error indicates that your module has parameters that were not used in producing loss.\n",
        "DDP-UNUSED",
        ("find_unused_parameters=True",),
    ),
    Case(
        "https://github.com/NVIDIA/Megatron-LM/issues/878",
        "OSError: [Errno 28] No space left on device\n",
        "NO-SPACE",
    ),
    Case(
        "https://github.com/pyg-team/pytorch-frame/pull/525",
        "A module that was compiled using NumPy 1.x cannot be run in\n"
        "NumPy 2.0.2 as it may crash. To support both 1.x and 2.x\n",
        "NUMPY2-ABI",
        ("numpy<2",),
    ),
    Case(
        "https://github.com/pawansharmaaaa/Lip_Wise/issues/20",
        "RuntimeError: Numpy is not available\n",
        "NUMPY-UNAVAILABLE",
        ("numpy<2",),
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/262",
        "ImportError: libhccl.so: cannot open shared object file: No such file or directory\n",
        "NPU-LIBHCCL",
        ("set_env.sh",),
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/152",
        "ImportError: libatb.so: cannot open shared object file: No such file or directory\n",
        "NPU-LIBATB",
        ("nnal/atb/set_env.sh",),
    ),
    Case(
        "https://github.com/Ascend/pytorch/issues/99",
        "OSError: /usr/local/Ascend/nnal/atb/latest/atb/cxx_abi_1/lib/libtbe_adapter.so: undefined "
        "symbol: _ZN3Mki2DlC1ERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEEb\n",
        "NPU-ABI",
        ("one release row",),
    ),
    Case(
        "https://github.com/hpcaitech/ColossalAI/issues/3677",
        "ERROR:torch.distributed.elastic.multiprocessing.api:failed (exitcode: -9) local_rank: 1 (pid: "
        "1168) of binary: /opt/conda/bin/python\n",
        "SIGKILL",
        ("host memory",),
    ),
    Case(
        "https://github.com/NVIDIA/nvidia-resiliency-ext/issues/18",
        "RuntimeError: CUDA error: CUDA-capable device(s) is/are busy or unavailable\n",
        "CUDA-BUSY",
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/2643",
        "(VllmWorker rank=3 pid=50935) ERROR 09-10 03:36:31 [multiproc_executor.py:527] RuntimeError: "
        "EI0007: [PID: 50935] 2025-09-10-03:36:31.100.592 Failed to allocate resource[qp] with info "
        "[aicpu rank:7,localUserrank:7,deviceLogicId:3,send_cq_depth:32768]. Reason: Memory "
        "resources are exhausted.\n",
        "HCCL-EI0007",
        ("--gpu-memory-utilization", "HCCL_BUFFSIZE"),
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/237",
        "RuntimeError: call aclnnSwiGlu failed, detail:EZ1001: [PID: 72153] 2025-03-04-15:41:40.695.851 "
        "Get path and read binary_info_config.json failed, please check if the opp_kernel package is "
        "installed!\n",
        "CANN-KERNELS-PACKAGE",
        ("Ascend-cann-kernels", "910B"),
    ),
    Case(
        "https://github.com/flashserve/flash-linear-attention-npu/issues/174",
        "[rank6]: RuntimeError: InnerRunOpApi:../torch_npu/csrc/framework/OpParamMaker.cpp:287 OPS "
        "function error: aclnnRecomputeWUFwd, error code is 561000\n"
        "[rank6]: AclNN_Runtime_Error(EZ9903): InitTilingParseCtx failed\n",
        "CANN-TILING-PARSE",
        ("import the Python package that registers the custom op",),
    ),
    Case(
        "https://github.com/hiyouga/LlamaFactory/issues/7522",
        "RuntimeError: call aclnnCast failed, detail:EZ1001: [PID: 775588] 2025-07-01-15:17:20.355.304 "
        "self not implemented for DT_BFLOAT16, should be in dtype support list [DT_FLOAT16,DT_FLOAT]\n",
        "NPU-BF16-KERNEL",
        ("float16",),
    ),
    Case(
        "https://github.com/Ascend/pytorch/issues/166",
        "RuntimeError: error code 507049\n"
        "EE9999[PID: 43311] The error from device(chipId:1, dieId:0), serial number is 6.\n"
        "there is a fftsplus sdma error, sdma channel is 2,\n",
        "ACL-SDMA-FAULT",
        ("enable_sleep_mode", "separate NPUs"),
    ),
    Case(
        "https://github.com/marin-community/marin/issues/7018",
        "Failed to create NCCL communicator: INTERNAL: ncclCommInitRankConfig(...) failed:\n"
        "invalid usage ... Last NCCL warning(error): 'Bootstrap : no socket interface found'\n",
        "NCCL-NO-INTERFACE",
        ("NCCL_SOCKET_IFNAME",),
    ),
    Case(
        "https://github.com/OpenBMB/VisCPM/issues/3",
        "RuntimeError: CUDA error: CUBLAS_STATUS_NOT_INITIALIZED when calling `cublasCreate(handle)`\n",
        "CUDA-CUBLAS-INIT",
        ("smaller model", "lower precision"),
    ),
    Case(
        "https://github.com/hw-native-sys/PTOAS/pull/721",
        "[ERROR] aclrtSynchronizeStream(stream) failed: 507014 (main.cpp:84)\n"
        "EZ9999[PID: 3577609] 2026-05-28-21:08:42.257.661 (EZ9999):  The error from device(chipId:2, "
        "dieId:1), serial number is 409, there is an exception of aicore error, core id is 18\n"
        "       The extend info: errcode:(0, 0, 0) errorStr: timeout or trap error. fsmId:1\n",
        "ACL-AIVEC",
        ("set_flag", "wait_flag"),
    ),
    Case(
        "https://github.com/huawei-csl/pto-dsl/pull/90",
        "[Error]: The aicore execution is abnormal. \n"
        "EZ9999[PID: 8146] 2026-03-16-20:13:22.806.034 (EZ9999):  The error from device(chipId:7, "
        "dieId:0), serial number is 6, there is an exception of fftsplus aicore error, core id is 12\n"
        "       Kernel task happen error, retCode=0x26, [aicore exception].\n",
        "ACL-AIVEC",
        ("pipe barrier",),
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/7384",
        "[rank11]:[E313 06:55:06.502248200 compiler_depend.ts:1693] [Rank 1] HCCL watchdog thread "
        "terminated with exception: [PID: 335] 2026-03-13-06:55:06.896.485 "
        "Execution_Error_ROCE_CQE(EI0013): An error CQE occurred during operator execution. Local "
        "information: server xx.xx.xx.199, device ID 3, device IP 10.20.13.9.\n",
        "HCCL-EI0013",
        ("hccn_tool", "peer process"),
    ),
    Case(
        "https://github.com/hiyouga/LlamaFactory/issues/4388",
        "RuntimeError: matmul_implement_npu:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:92 NPU "
        "function error: call aclnnMatmul failed, error code is 161002\n"
        "[PID: 595606] 2025-11-28-18:37:41.744.591 AclNN_Parameter_Error(EZ1001): Self dtype "
        "DT_FLOAT or mat2 dtype DT_FLOAT not support under keep type mode.\n",
        "ACLNN-INNER",
        ("shape, dtype or layout",),
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/13086",
        '(TaskRunner pid=1513738)   File "vllm_ascend/ascend_forward_context.py", line 271, in '
        "select_moe_comm_method\n"
        '(TaskRunner pid=1513738)     raise ValueError(f"Unsupported soc_version: {soc_version}")\n',
        "CANN-SOC-UNSUPPORTED",
        ("upgrade vllm-ascend",),
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/5599",
        "[ERROR] the socversion Ascend910B1 of bin package does not match the current device "
        "socverison Ascend310P3. Please modify default socversion in run.sh.\n",
        "CANN-SOC-UNSUPPORTED",
        ("-310p image", "SOC_VERSION"),
    ),
    Case(  # the same message printed without a level: read by its own words
        "https://github.com/vllm-project/vllm-ascend/issues/6676",
        "the socversion Ascend910B1 of bin package does not match the current device socversion "
        "Ascend310P3.\n",
        "CANN-SOC-UNSUPPORTED",
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/6796",
        "(EngineCore_DP0 pid=7) ERROR 02-25 03:11:49 [core.py:710] RuntimeError: Can not support "
        "soc_version: 104.\n",
        "CANN-SOC-UNSUPPORTED",
        ("Atlas A2 / A3", "supported hardware"),
    ),
    Case(
        "https://github.com/OFA-Sys/Chinese-CLIP/issues/279",
        "RuntimeError: Distributed package doesn't have NCCL built in\n",
        "NCCL-NOT-BUILT",
        ("backend='gloo'", "backend='hccl'", "Linux"),
    ),
    Case(
        "https://github.com/eosphoros-ai/DB-GPT-Hub/issues/79",
        "ValueError: Target modules ['q_proj', 'v_proj'] not found in the base model. Please check "
        "the target modules and try again.\n",
        "PEFT-TARGET-MODULES",
        ("W_pack", "target_modules", "--lora_target"),
    ),
    Case(
        "https://github.com/locuslab/open-unlearning/issues/38",
        "ValueError: DeepSpeed Zero-3 is not compatible with `low_cpu_mem_usage=True` or with "
        "passing a `device_map`.\n",
        "ZERO3-DEVICE-MAP",
        ("remove the device_map",),
    ),
    Case(  # the peer pair under the 107000 that only says "invalid value"
        "https://github.com/modelscope/ms-swift/issues/975",
        "[ERROR] RUNTIME(1,python):2024-05-20-10:00:00.000.000 call rtDeviceCanAccessPeer failed, "
        "deviceId = 0, peerPhyId = 4, runtime result = 107000\n",
        "ACL-P2P-PEER",
        ("ASCEND_RT_VISIBLE_DEVICES", "peer-to-peer group"),
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/pull/1653",
        "RuntimeError: replay:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:201 NPU function "
        "error: c10_npu::acl::AclmdlRIExecuteAsync(model_ri_, stream), error code is 507000\n",
        "ACL507000",
        ("CANN version", "previous CANN release"),
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/2406",
        "[ERROR] HCCL(1,python3):2025-08-17-13:03:25.747.057 [adapter_hccp.cc:2286] [4]this "
        "package does not support hrtRaAiQpCreate for device, please change new package\n",
        "HCCL-PACKAGE-UNSUPPORTED",
        ("driver and firmware", "HDK"),
    ),
    Case(  # torch warns, and the job fails later on the first CUDA call
        "https://github.com/IEIT-Yuan/Yuan-2.0/issues/65",
        "/usr/lib/python3/torch/cuda/__init__.py:124: UserWarning: CUDA initialization: The "
        "NVIDIA driver on your system is too old (found version 11000).\n",
        "CUDA-DRIVER-OLD",
        ("GPU driver",),
    ),
    Case(  # the device's words two lines under the aicore line: the out-of-range detail wins
        "https://github.com/vllm-project/vllm-ascend/issues/2918",
        "[ERROR] 2025-09-10 The error from device(chipId:5, dieId:0), serial number is 11, there "
        "is an exception of aivec error, core id is 41, error code = 0x800000\n"
        "    [ERROR] The extend info: errcode:(0x800000, 0, 0) errorStr: The DDR address of the MTE "
        "instruction is out of range. fixp_error0 info: 0x6000042\n",
        "ACL-MTE-OOR",
        ("enforce-eager", "upgrade vllm-ascend", "tile size"),
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/9873",
        "[ERROR] ASCENDCL(2,):2026-06-02-04:45:20.827.749 [stream.cpp:167]2 "
        "aclrtSynchronizeStreamWithTimeoutImpl:synchronize stream with timeout failed, runtime "
        "result = 507035\n",
        "ACL507035",
        ("upgrade CANN", "HCCL_OP_EXPANSION_MODE"),
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/2244",
        "RuntimeError: SetPrecisionMode:build/CMakeFiles/torch_npu.dir/compiler_depend.ts:156 NPU "
        "function error: at_npu::native::AclSetCompileopt(aclCompileOpt::ACL_PRECISION_MODE, "
        "precision_mode), error code is 500001\n",
        "ACL500001",
        ("host driver", "driver and firmware"),
    ),
    Case(
        "https://github.com/vllm-project/vllm-ascend/issues/1114",
        "ERROR camem: Failed to import vllm_ascend_C:libvllm_ascend_kernels.so: cannot open shared "
        "object file: No such file or directory\n",
        "LIB-NOT-FOUND",
        ("set_env.sh", "COMPILE_CUSTOM_KERNELS", "installation guide"),
    ),
    Case(
        "https://github.com/instructlab/instructlab/pull/713",
        "ImportError: cannot import name 'top_k_top_p_filtering' from 'transformers' "
        "(/venv/lib/python3.12/site-packages/transformers/__init__.py)\n",
        "PY-IMPORT-NAME",
        ("pin {module}",),  # filled with the module in the verdict
    ),
    Case(
        "https://github.com/open-mmlab/mmdetection/issues/4828",
        "AssertionError: The `num_classes` (3) in Shared2FCBBoxHead of MMDataParallel does not "
        "matches the length of `CLASSES` 80) in CocoDataset\n",
        "MMDET-NUM-CLASSES",
        ("classes=", "metainfo"),
    ),
    Case(
        "https://github.com/open-mmlab/mmcv/issues/2236",
        "AssertionError: MMCV==1.3.9 is used but incompatible. Please install mmcv>=(1, 3, 13, 0, "
        "0, 0), <(1, 7, 0, 0, 0, 0).\n",
        "MMCV-VERSION",
        ("mim install -U mmcv-full",),
    ),
    Case(
        "https://github.com/hiyouga/LlamaFactory/issues/9",
        "ValueError: You can't train a model that has been loaded in 8-bit precision on a different "
        "device than the one you're training on.\n",
        "BNB-DEVICE-MAP",
        ("torch.cuda.current_device()", "upgrade accelerate"),
    ),
    Case(
        "https://github.com/huggingface/trl/issues/1337",
        "ValueError: Error occurred while packing the dataset. Make sure that your dataset has "
        "enough samples to at least yield one packed sequence.\n",
        "TRL-PACKING-EMPTY",
        ("max_seq_length", "packing=False"),
    ),
    Case(
        "https://github.com/bene-ges/nemo_compatible/issues/16",
        "lightning_fabric.utilities.exceptions.MisconfigurationException: You requested gpu: [1]\n"
        " But your machine only has: [0]\n",
        "LIGHTNING-DEVICES",
        ("trainer.devices=[0]",),
    ),
    Case(
        "https://github.com/verl-project/verl/issues/161",
        "torch.distributed.DistBackendError: NCCL error in: ProcessGroupNCCL.cpp:1970, invalid "
        "usage, NCCL version 2.20.5\n"
        "Last error:\n"
        "Duplicate GPU detected : rank 1 and rank 0 both on CUDA device 1000\n",
        "NCCL-DUPLICATE-GPU",
        ("upgrade Ray",),
    ),
]

# Lines near the ones above that must not give the entry: another field's words, another dtype,
# a device's fault report that is no operator's refusal, an info line.
NEAR_MISSES = [
    ("ERROR: Failed to allocate resource for the data loader\n", "HCCL-EI0007"),
    ("INFO: wrote binary_info_config.json to the cache (error count 0)\n", "CANN-KERNELS-PACKAGE"),
    ("Op [MatMul] InitTilingParseCtx done, error budget 0\n", "CANN-TILING-PARSE"),
    (
        "EZ1001: self not implemented for DT_FLOAT16, should be in dtype support list\n",
        "NPU-BF16-KERNEL",
    ),
    ("[ERROR] sdma channel is 2, sdmaState=0x6\n", "ACL-SDMA-FAULT"),
    ("NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0> (error handling on)\n", "NCCL-NO-INTERFACE"),
    (
        "RuntimeError: CUDA error: CUBLAS_STATUS_EXECUTION_FAILED when calling `cublasSgemm`\n",
        "CUDA-CUBLAS-INIT",
    ),
    ("ERROR: errorString: none\n", "ACL-AIVEC"),
    ("[PID: 1] 2025-11-28-18:37:41 AclNN_Parameter_Error(EZ1001):\n", "ACLNN-INNER"),
    ("ERROR EI00130: a CQE count of 3 was read\n", "HCCL-EI0013"),
    ("ERROR: there is an aicpu error, retry later\n", "ACL-AIVEC"),
    ("Kernel task happen error, retCode=0x2a, [aicpu exception].\n", "ACL-AIVEC"),
    ("INFO soc_version: ascend910b, no error\n", "CANN-SOC-UNSUPPORTED"),
    ("INFO: bin package does not match the cache key, rebuilding it\n", "CANN-SOC-UNSUPPORTED"),
    ("ERROR: can not support soc_version check on the CPU backend\n", "CANN-SOC-UNSUPPORTED"),
    ("ERROR: Distributed package doesn't have MPI built in\n", "NCCL-NOT-BUILT"),
    ("ERROR: Target modules were saved with the adapter\n", "PEFT-TARGET-MODULES"),
    (
        "ValueError: DeepSpeed Zero-3 is not compatible with `torch_dtype` auto\n",
        "ZERO3-DEVICE-MAP",
    ),
    ("[ERROR] rtDeviceCanAccessPeer returned 0 for deviceId = 0\n", "ACL-P2P-PEER"),
    ("ERROR: The `num_classes` (3) of the config is set\n", "MMDET-NUM-CLASSES"),
    ("ERROR: MMCV==1.7.0 is used and compatible\n", "MMCV-VERSION"),
    (
        "ValueError: You can't train a model that has been loaded in 8-bit precision\n",
        "BNB-DEVICE-MAP",
    ),
    ("ERROR: packing the dataset took 3 s\n", "TRL-PACKING-EMPTY"),
    ("MisconfigurationException: You requested an unknown accelerator\n", "LIGHTNING-DEVICES"),
    ("[ERROR] runtime result = 5070001 on a retry\n", "ACL507000"),
    (
        "[ERROR] HCCL this package does not support the log level NOTICE\n",
        "HCCL-PACKAGE-UNSUPPORTED",
    ),
    (
        "EZ9999[PID: 1] (EZ9999):  The error from device(chipId:2, dieId:1), serial number is 409\n",
        "ACLNN-INNER",
    ),
]


@pytest.mark.parametrize(("line", "entry"), NEAR_MISSES, ids=[e for _, e in NEAR_MISSES])
def test_a_near_miss_does_not_give_the_entry(line: str, entry: str) -> None:
    assert has_anchor(line.encode())  # the line is read: the entry itself must refuse it
    assert entry not in [s.id for s in load().matches(line.rstrip())]


@pytest.mark.parametrize("case", CASES, ids=[f"{c.entry}-{c.source.split('/')[-1]}" for c in CASES])
def test_public_excerpt_gives_its_entry_and_the_threads_remedy(case: Case, tmp_path: Path) -> None:
    (tmp_path / "rank_0.log").write_text("step 1 loss 2.31\n" + case.log, encoding="utf-8")
    verdict = explain_paths([tmp_path])
    assert verdict.root is not None, case.source
    headline = verdict.root.headline
    assert headline.signature.id == case.entry, (
        case.source,
        [f.signature.id for f in verdict.root.findings],
    )
    advice = headline.signature.fix + (headline.oom.advice() if headline.oom else "")
    for words in case.remedy:
        assert words in advice, (case.source, advice)


def test_the_fixtures_cover_thirty_threads_and_every_matched_line_has_an_anchor() -> None:
    assert len({case.source for case in CASES}) >= 30
    catalogue = load()
    for case in CASES:
        matched = [line for line in case.log.splitlines() if catalogue.match(line)]
        assert matched, case.source
        assert all(has_anchor(line.encode()) for line in matched), case.source


def test_the_catalogue_has_eighty_entries_each_with_a_public_source() -> None:
    catalogue = load()
    assert len(catalogue.signatures) >= 80
    assert len({s.id for s in catalogue.signatures}) == len(catalogue.signatures)
    for signature in catalogue.signatures:
        assert signature.source.startswith("https://github.com/"), signature.id
        assert signature.meaning, signature.id
        assert signature.fix, signature.id
        assert signature.causes, signature.id
        assert any(
            (signature.codes, signature.ecodes, signature.errs, signature.hccl_codes,
             signature.phrases, signature.patterns, signature.signals, signature.exception)
        ), signature.id  # fmt: skip
        for pattern in signature.patterns:  # bounded repeats only: linear in an 8 KiB line
            outside_classes = re.sub(r"\[[^\]]*\]", "", pattern)
            assert not re.search(r"(?<!\\)[+*]", outside_classes), (signature.id, pattern)


def test_a_peer_that_left_while_gloo_connected_is_a_cause_with_its_barrier(tmp_path: Path) -> None:
    # As a two-node recovery run printed it: a rank resumed after its last step left at once, while
    # a slower rank still connected the full mesh.
    (tmp_path / "rank_0.log").write_text(
        "RuntimeError: Gloo connectFullMesh failed with [/__w/pytorch/pytorch/third_party/gloo/"
        "gloo/transport/tcp/pair.cc:553] Connection closed by peer [127.0.0.1]:37045. This is "
        "typically caused by a remote worker crashing.\n",
        encoding="utf-8",
    )
    verdict = explain_paths([tmp_path])
    assert verdict.root is not None
    signature = verdict.root.headline.signature
    assert signature.id == "GLOO-FULLMESH"
    assert any("exited while the others were still connecting" in c for c in signature.causes)
    assert "dist.barrier()" in signature.fix
