"""The CPU the llvm-cpu target generates code for. `host` asks LLVM what this machine is (AVX-512
when present); any other name is an LLVM CPU name (`x86-64` is the generic choice, `x86-64-v3`
AVX2, `skylake-avx512`, ...). The features are recorded in the module so the runtime can refuse
to run code that needs instructions its CPU lacks, instead of dying on an illegal instruction."""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

import llvmlite.binding as llvm

from weir.errors import UsageError


@cache
def _initialize() -> None:
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()


@dataclass(frozen=True)
class CpuTarget:
    triple: str
    cpu: str
    # LLVM's feature string, `+avx2,-avx512f,...`; only the `+` entries are requirements.
    features: str

    @property
    def required_features(self) -> tuple[str, ...]:
        return tuple(sorted(f[1:] for f in self.features.split(",") if f.startswith("+")))

    @property
    def vector_bits(self) -> int:
        """The widest vector register the code may use: what microkernels block for."""
        required = set(self.required_features)
        if "avx512f" in required:
            return 512
        if "avx" in required:
            return 256
        return 128

    @property
    def native_ldexp(self) -> bool:
        """Whether LLVM lowers `llvm.ldexp` to an instruction, on vectors too (AVX-512F's
        vscalef); elsewhere it is a libm call per element, which inline math must avoid."""
        return "avx512f" in self.required_features

    def target_machine(self) -> llvm.TargetMachine:
        _initialize()
        target = llvm.Target.from_triple(self.triple)
        features = self.features
        if self.vector_bits == 512:
            # LLVM's tuning for AVX-512 parts caps vectors at 256 bits; the vectorised loops here
            # (polynomial math, reductions) run about 1.4x faster at the full width.
            features += ",-prefer-256-bit"
        return target.create_target_machine(cpu=self.cpu, features=features, opt=3,
                                            reloc="pic", codemodel="default")


# The generic x86-64 levels: their features are spelled out so that the module records exactly
# what its code may use. `host` adds whatever this machine has.
_X86_64 = "+sse,+sse2,+cx8,+fxsr,+mmx,+cmov"
_X86_64_V2 = _X86_64 + ",+cx16,+popcnt,+sse3,+sse4.1,+sse4.2,+ssse3,+sahf"
_X86_64_V3 = _X86_64_V2 + ",+avx,+avx2,+bmi,+bmi2,+f16c,+fma,+lzcnt,+movbe,+xsave"
_X86_64_V4 = _X86_64_V3 + ",+avx512f,+avx512bw,+avx512cd,+avx512dq,+avx512vl,+evex512"
GENERIC_CPUS: dict[str, str] = {
    "x86-64": _X86_64, "generic": _X86_64, "x86-64-v2": _X86_64_V2, "x86-64-v3": _X86_64_V3,
    "x86-64-v4": _X86_64_V4,
}


def resolve_cpu(name: str = "host", features: str = "") -> CpuTarget:
    """`features`: extra `+feat,-feat` entries on top of the CPU's own (the compiler flag
    `--iree-llvmcpu-target-cpu-features`)."""
    _initialize()
    triple = llvm.get_process_triple()
    if name == "host":
        cpu, base = llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()
    elif name in GENERIC_CPUS:
        cpu, base = ("x86-64" if name == "generic" else name), GENERIC_CPUS[name]
    else:
        raise UsageError(f"--iree-llvmcpu-target-cpu: unknown CPU '{name}' (known: host, "
                         f"{', '.join(GENERIC_CPUS)})")
    known = _known_features()
    for entry in filter(None, features.split(",")):
        if entry[0] not in "+-" or len(entry) < 2:
            raise UsageError(f"--iree-llvmcpu-target-cpu-features: '{entry}' must be +FEATURE "
                             "or -FEATURE")
        if entry[1:] not in known:
            # Checked here: LLVM itself only prints a warning to stderr and ignores it.
            raise UsageError(f"--iree-llvmcpu-target-cpu-features: '{entry[1:]}' is not a CPU "
                             f"feature LLVM knows for {triple}")
    merged = ",".join(f for f in (base, features) if f)
    return CpuTarget(triple, cpu, merged)


def _known_features() -> frozenset[str]:
    """The feature names LLVM knows for this machine's target: its host feature map (which lists
    them on or off) and those the generic CPU levels above spell out."""
    entries = [llvm.get_host_cpu_features().flatten(), *GENERIC_CPUS.values()]
    return frozenset(f[1:] for e in entries for f in e.split(",") if f)


def host_features() -> frozenset[str]:
    """What this machine's CPU has: the runtime checks a module's requirements against it."""
    _initialize()
    return frozenset(f[1:] for f in llvm.get_host_cpu_features().flatten().split(",")
                     if f.startswith("+"))
