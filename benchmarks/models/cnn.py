"""The ImageNet classics of the zoo, written with torch.nn alone (torchvision does not install
beside the pinned torch): ResNet-50's bottleneck blocks, a VGG-style stack of 3x3 convolutions,
SqueezeNet's fire modules and a DenseNet-style chain of concatenations. `width` scales every
channel count and a depth argument caps the blocks per stage, so the tests run the same kinds of
layers small; the benchmark sizes are the published networks at 224x224."""

from __future__ import annotations

import torch
from torch import nn

from benchmarks.models.vision import conv_bn, randomize_batch_norms

Built = tuple[nn.Module, tuple[torch.Tensor, ...]]


class Bottleneck(nn.Module):
    """1x1 reduction, strided 3x3, 1x1 expansion by 4, and a shortcut (a strided 1x1
    convolution when the shape changes)."""

    def __init__(self, cin: int, mid: int, stride: int) -> None:
        super().__init__()
        cout = 4 * mid
        self.body = nn.Sequential(*conv_bn(cin, mid, 1), nn.ReLU(),
                                  *conv_bn(mid, mid, 3, stride), nn.ReLU(),
                                  *conv_bn(mid, cout, 1))
        self.shortcut = nn.Sequential(*conv_bn(cin, cout, 1, stride)) \
            if stride != 1 or cin != cout else nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.relu(self.body(x) + self.shortcut(x))


class ResNet50(nn.Module):
    """ResNet-50: stages of 3, 4, 6 and 3 bottlenecks, each stage's count capped at `blocks`
    (the tests take 1: every kind of block and shortcut)."""

    def __init__(self, width: int = 64, classes: int = 1000, blocks: int = 6) -> None:
        super().__init__()
        self.stem = nn.Sequential(*conv_bn(3, width, 7, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1))
        layers: list[nn.Module] = []
        cin = width
        for stage, count in enumerate((3, 4, 6, 3)):
            mid = width << stage
            for i in range(min(count, blocks)):
                layers.append(Bottleneck(cin, mid, 2 if stage > 0 and i == 0 else 1))
                cin = 4 * mid
        self.blocks = nn.Sequential(*layers)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.blocks(self.stem(x)),
                                                                        1), 1))


class VGG(nn.Module):
    """VGG-style: `convs` 3x3 convolutions (with ReLU) per stage over five stages, each stage
    ending in a 2x2 max pool, then two hidden linear layers (VGG-19: convs 2, 2, 4, 4, 4 at
    width 64; the stages' counts are capped at `convs`)."""

    def __init__(self, width: int = 64, classes: int = 1000, convs: int = 4,
                 hidden: int = 4096) -> None:
        super().__init__()
        layers: list[nn.Module] = []
        cin = 3
        for stage, count in enumerate((2, 2, 4, 4, 4)):
            cout = width * min(1 << stage, 8)
            for _ in range(min(count, convs)):
                layers += [nn.Conv2d(cin, cout, 3, padding=1), nn.ReLU()]
                cin = cout
            layers.append(nn.MaxPool2d(2))
        self.features = nn.Sequential(*layers)
        self.head = nn.Sequential(nn.Flatten(), nn.Linear(cin, hidden), nn.ReLU(),
                                  nn.Linear(hidden, hidden), nn.ReLU(),
                                  nn.Linear(hidden, classes))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        # VGG's 7x7 average pool before the head, taken as a global one: any image size works.
        return self.head(nn.functional.adaptive_avg_pool2d(self.features(x), 1))


class Fire(nn.Module):
    """SqueezeNet's fire module: a 1x1 squeeze, then 1x1 and 3x3 expansions concatenated."""

    def __init__(self, cin: int, squeeze: int, expand: int) -> None:
        super().__init__()
        self.squeeze = nn.Sequential(nn.Conv2d(cin, squeeze, 1), nn.ReLU())
        self.expand1 = nn.Sequential(nn.Conv2d(squeeze, expand, 1), nn.ReLU())
        self.expand3 = nn.Sequential(nn.Conv2d(squeeze, expand, 3, padding=1), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        s = self.squeeze(x)
        return torch.cat([self.expand1(s), self.expand3(s)], 1)


# SqueezeNet 1.1's fire modules (squeeze, expand at width 16), with a max pool before the ones
# marked True. Its pools here floor their output size (ceil_mode=False): torch-mlir lowers a
# ceil-mode pool to a pooling op whose output has one window fewer than its padded input holds,
# which weir's verifier of linalg.pooling_nchw_max refuses ("output H size 7 should be 8").
_FIRES = ((1, 4, False), (1, 4, False), (2, 8, True), (2, 8, False), (3, 12, True),
          (3, 12, False), (4, 16, False), (4, 16, False))


class SqueezeNet(nn.Module):
    """SqueezeNet 1.1 (`fires` = 8 at width 16); its classifier is a 1x1 convolution and a
    global average pool."""

    def __init__(self, width: int = 16, classes: int = 1000, fires: int = 8) -> None:
        super().__init__()
        layers: list[nn.Module] = [nn.Conv2d(3, 4 * width, 3, 2), nn.ReLU(),
                                   nn.MaxPool2d(3, 2)]
        cin = 4 * width
        for squeeze, expand, pool in _FIRES[:fires]:
            if pool:
                layers.append(nn.MaxPool2d(3, 2))
            layers.append(Fire(cin, squeeze * width, expand * width))
            cin = 2 * expand * width
        self.features = nn.Sequential(*layers)
        self.classifier = nn.Sequential(nn.Conv2d(cin, classes, 1), nn.ReLU())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.flatten(nn.functional.adaptive_avg_pool2d(
            self.classifier(self.features(x)), 1), 1)


class DenseLayer(nn.Module):
    """BN-ReLU-1x1 (to 4 x growth) and BN-ReLU-3x3 (to growth), its output concatenated to
    its input: every layer of a dense block sees every earlier layer's features."""

    def __init__(self, cin: int, growth: int) -> None:
        super().__init__()
        self.body = nn.Sequential(nn.BatchNorm2d(cin), nn.ReLU(),
                                  nn.Conv2d(cin, 4 * growth, 1, bias=False),
                                  nn.BatchNorm2d(4 * growth), nn.ReLU(),
                                  nn.Conv2d(4 * growth, growth, 3, padding=1, bias=False))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([x, self.body(x)], 1)


class DenseNet(nn.Module):
    """DenseNet-121's shape: four dense blocks of 6, 12, 24 and 16 layers (each capped at
    `layers`) joined by transitions (BN-ReLU-1x1 halving the channels, 2x2 average pool)."""

    def __init__(self, growth: int = 32, classes: int = 1000, layers: int = 24) -> None:
        super().__init__()
        cin = 2 * growth
        parts: list[nn.Module] = [*conv_bn(3, cin, 7, 2), nn.ReLU(), nn.MaxPool2d(3, 2, 1)]
        for block, count in enumerate((6, 12, 24, 16)):
            for _ in range(min(count, layers)):
                parts.append(DenseLayer(cin, growth))
                cin += growth
            if block < 3:
                parts += [nn.BatchNorm2d(cin), nn.ReLU(), nn.Conv2d(cin, cin // 2, 1, bias=False),
                          nn.AvgPool2d(2)]
                cin //= 2
        parts += [nn.BatchNorm2d(cin), nn.ReLU()]
        self.features = nn.Sequential(*parts)
        self.fc = nn.Linear(cin, classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(torch.flatten(nn.functional.adaptive_avg_pool2d(self.features(x), 1), 1))


def _built(model: nn.Module, batch: int, image: int) -> Built:
    randomize_batch_norms(model)
    return model.eval(), (torch.randn(batch, 3, image, image),)


def resnet50(batch: int, image: int, width: int, classes: int, blocks: int) -> Built:
    torch.manual_seed(50)
    return _built(ResNet50(width, classes, blocks), batch, image)


def vgg(batch: int, image: int, width: int, classes: int, convs: int, hidden: int) -> Built:
    torch.manual_seed(19)
    return _built(VGG(width, classes, convs, hidden), batch, image)


def squeezenet(batch: int, image: int, width: int, classes: int, fires: int) -> Built:
    torch.manual_seed(11)
    return _built(SqueezeNet(width, classes, fires), batch, image)


def densenet(batch: int, image: int, growth: int, classes: int, layers: int) -> Built:
    torch.manual_seed(121)
    return _built(DenseNet(growth, classes, layers), batch, image)
