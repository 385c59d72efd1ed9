import torch
from torch import nn


class Encoder(nn.Module):
    def __init__(self, width: int):
        super().__init__()
        # Lands on whatever GPU is current when the model is built.
        self.proj = nn.Linear(width, width).cuda()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.proj(x)


def warm_up(rank: int) -> None:
    # Changes the current device of the caller's thread, long after this returns.
    torch.cuda.set_device(rank)
    torch.zeros(1, device=rank)


def encode(encoder: Encoder, batch: torch.Tensor, device: torch.device) -> torch.Tensor:
    # The caller chooses the device: nothing to flag.
    return encoder(batch.to(device))
