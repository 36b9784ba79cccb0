# rules: PRT001 PRT201 PRT301 PRT304 PRT304
# modes: portable
import argparse

import torch


class Trainer:
    def __init__(self, config):
        self.device = config.device


parser = argparse.ArgumentParser()
parser.add_argument("-d", "--train-device", dest="device", default="cuda", choices=["cuda", "cpu"])
args = parser.parse_args()
device = args.device
x = torch.ones(2).cuda()
# output
import argparse

import torch
import portable_device


class Trainer:
    def __init__(self, config):
        self.device = portable_device.given_device(config.device, "config.device")


parser = argparse.ArgumentParser()
parser.add_argument("-d", "--train-device", dest="device", default=portable_device.device_type(), choices=["cuda", "cpu"])
args = parser.parse_args()
device = portable_device.given_device(args.device, "--train-device")
x = torch.ones(2).to(portable_device.device())
