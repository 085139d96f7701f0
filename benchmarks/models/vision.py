"""Convolutional networks written with torch.nn alone (torchvision does not install beside the
pinned torch): ResNet-18's basic blocks and MobileNetV2's inverted residuals with depthwise
convolutions. `width` scales every channel count, so the tests run the same graph small."""

from __future__ import annotations

import torch
from torch import nn


def conv_bn(cin: int, cout: int, kernel: int, stride: int = 1, groups: int = 1) -> list[nn.Module]:
    return [nn.Conv2d(cin, cout, kernel, stride, kernel // 2, groups=groups, bias=False),
            nn.BatchNorm2d(cout)]


class BasicBlock(nn.Module):
    """Two 3x3 convolutions and a shortcut (a strided 1x1 convolution when the shape changes)."""

    def __init__(self, cin: int, cout: int, stride: int) -> None:
        super().__init__()
        self.body = nn.Sequential(*conv_bn(cin, cout, 3, stride), nn.ReLU(),
                                  *conv_bn(cout, cout, 3))
        self.shortcut = nn.Sequential(*conv_bn(cin, cout, 1, stride)) \
            if stride != 1 or cin != cout else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + self.shortcut(x))


class ResNet18(nn.Module):
    """ResNet-18 with `blocks` = 2 basic blocks per stage; the tests take 1 (every kind of block
    and shortcut, a third of the compile time)."""

    def __init__(self, width: int = 64, classes: int = 1000, blocks: int = 2) -> None:
        super().__init__()
        self.stem = nn.Sequential(*conv_bn(3, width, 7, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        layers: list[nn.Module] = []
        cin = width
        for stage, cout in enumerate((width, 2 * width, 4 * width, 8 * width)):
            layers += [BasicBlock(cin, cout, 1 if stage == 0 else 2)]
            layers += [BasicBlock(cout, cout, 1) for _ in range(blocks - 1)]
            cin = cout
        self.blocks = nn.Sequential(*layers)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(self.pool(self.blocks(self.stem(x))), 1))


class InvertedResidual(nn.Module):
    """1x1 expansion, 3x3 depthwise convolution (groups = channels), 1x1 linear projection;
    a residual when the shape is kept."""

    def __init__(self, cin: int, cout: int, stride: int, expand: int) -> None:
        super().__init__()
        hidden = cin * expand
        layers: list[nn.Module] = []
        if expand != 1:
            layers += [*conv_bn(cin, hidden, 1), nn.ReLU6()]
        layers += [*conv_bn(hidden, hidden, 3, stride, groups=hidden), nn.ReLU6(),
                   *conv_bn(hidden, cout, 1)]
        self.body = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.body(x)
        return x + y if self.residual else y


# MobileNetV2's stages: expansion, output channels (at width 32), repeats, first stride.
_MOBILENET_STAGES = ((1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                     (6, 160, 3, 2), (6, 320, 1, 1))


class MobileNetV2(nn.Module):
    def __init__(self, width: int = 32, classes: int = 1000, repeats: int = 4,
                 stages: int = 7) -> None:
        """`repeats` caps each stage's repeated blocks and `stages` keeps the first stages (4
        and 7 are the whole network; the tests take 2 and 3: the unexpanded block, strided
        and widening blocks, and residual ones)."""
        super().__init__()
        scale = width / 32
        layers: list[nn.Module] = [*conv_bn(3, width, 3, 2), nn.ReLU6()]
        cin = width
        for expand, channels, count, stride in _MOBILENET_STAGES[:stages]:
            cout = max(4, int(channels * scale))
            for i in range(min(count, repeats)):
                layers.append(InvertedResidual(cin, cout, stride if i == 0 else 1, expand))
                cin = cout
        last = max(8, int(1280 * scale))
        layers += [*conv_bn(cin, last, 1), nn.ReLU6()]
        self.features = nn.Sequential(*layers)
        self.fc = nn.Linear(last, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.features(x).mean((2, 3)))


def randomize_batch_norms(model: nn.Module) -> None:
    """Running statistics that are not the identity, so batch norm is really computed."""
    with torch.no_grad():
        for module in model.modules():
            if isinstance(module, nn.BatchNorm2d):
                module.running_mean.uniform_(-0.2, 0.2)
                module.running_var.uniform_(0.5, 1.5)
                module.weight.uniform_(0.5, 1.5)
                module.bias.uniform_(-0.2, 0.2)


def resnet18(batch: int, image: int, width: int, classes: int,
             blocks: int) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(18)
    model = ResNet18(width, classes, blocks)
    randomize_batch_norms(model)
    return model.eval(), (torch.randn(batch, 3, image, image),)


def mobilenet_v2(batch: int, image: int, width: int, classes: int, repeats: int,
                 stages: int) -> tuple[nn.Module, tuple[torch.Tensor, ...]]:
    torch.manual_seed(2)
    model = MobileNetV2(width, classes, repeats, stages)
    randomize_batch_norms(model)
    return model.eval(), (torch.randn(batch, 3, image, image),)
