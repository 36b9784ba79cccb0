# Older training utilities, written for torch 1.x on GPUs.
import torch
import torch.cuda as tc
from torch.cuda import nvtx
from torch.autograd import Variable

USE_CUDA = torch.cuda.is_available()
dtype = torch.cuda.FloatTensor if USE_CUDA else torch.FloatTensor
long_dtype = torch.cuda.LongTensor


def to_var(x, volatile=False):
    if torch.cuda.is_available():
        x = x.cuda()
    return Variable(x, volatile=volatile)


def half(t):
    return t.type("torch.cuda.HalfTensor") if t.is_cuda else t.half()


def load_legacy(path, gpu):
    loc = {"cuda:0": "cuda:%d" % gpu}
    return torch.load(path, map_location=loc if gpu >= 0 else "cpu")


def load_to_gpu(path):
    return torch.load(path, map_location=lambda storage, loc: storage.cuda())


def timed(fn, *args):
    start = tc.Event(enable_timing=True)
    end = tc.Event(enable_timing=True)
    nvtx.range_push("timed")
    start.record()
    out = fn(*args)
    end.record()
    tc.synchronize()
    nvtx.range_pop()
    print("gpu count", tc.device_count(), "capability", tc.get_device_capability())
    return out, start.elapsed_time(end)


def graph_step(static_input, model):
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        static_output = model(static_input)
    return g, static_output


if torch.cuda.get_device_properties(0).major >= 8:
    torch.backends.cuda.matmul.allow_tf32 = True
with torch.backends.cuda.sdp_kernel(enable_flash=True):
    pass
model = torch.nn.DataParallel(torch.nn.Linear(4, 4)).cuda()
with torch.autograd.profiler.profile(use_cuda=True) as prof:
    model(torch.randn(2, 4).type(dtype))
