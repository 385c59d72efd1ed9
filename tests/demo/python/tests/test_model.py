import torch

from placement_demo.model import Encoder


def test_encoder_on_the_second_gpu():
    # Tests choose their devices: nothing to flag.
    encoder = Encoder(8).to("cuda:1")
    assert encoder(torch.zeros(2, 8, device="cuda:1")).shape == (2, 8)
