import os

import torch

from placement_demo.model import Encoder


def main() -> None:
    device = "cuda" if torch.cuda.is_available() else "cpu"
    encoder = Encoder(64).to(device)
    # Too late: CUDA has started, and the driver read the variable once.
    os.environ["CUDA_VISIBLE_DEVICES"] = "1"
    mask = torch.ones(64)
    for step in range(100):
        batch = torch.randn(8, 64, device=device)
        # The same mask crosses the bus in every step.
        loss = (encoder(batch) * mask.to(device)).sum()
        loss.backward()


if __name__ == "__main__":
    main()
