# rules:
def run(use_cuda=True):
    return use_cuda


run(use_cuda=True)
