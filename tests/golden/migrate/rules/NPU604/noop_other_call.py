# rules:
def run(experimental_config=None):
    return experimental_config


run(experimental_config={"profiler": "on"})
