# rules: PRT001 PRT101 PRT101 PRT102 PRT105
# modes: portable
import torch


class Seeder:
    def save(self):
        self.state = torch.cuda.get_rng_state()

    def save_and_mark(self):
        self.save()
        torch.cuda.nvtx.range_push("seeded")


SEEDER = Seeder()


def seed(value):
    torch.manual_seed(value)
    if torch.cuda.is_available():
        SEEDER.save()


def seed_and_mark(value):
    torch.manual_seed(value)
    if torch.cuda.is_available():
        SEEDER.save_and_mark()
# output
import torch
import portable_device


class Seeder:
    def save(self):
        self.state = portable_device.get_rng_state()

    def save_and_mark(self):
        self.save()
        torch.cuda.nvtx.range_push("seeded")


SEEDER = Seeder()


def seed(value):
    torch.manual_seed(value)
    if torch.accelerator.is_available():
        SEEDER.save()


def seed_and_mark(value):
    torch.manual_seed(value)
    if torch.cuda.is_available():
        SEEDER.save_and_mark()
