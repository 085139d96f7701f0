"""The undefined symbols of an ELF64 relocatable object: what the in-memory linker must find in
this process. LLVM's linker resolves a missing one to address 0 and the first call jumps there,
so the loader asks for each before linking and refuses the executable instead of crashing."""

from __future__ import annotations

import struct

from weir.errors import ModuleFormatError

_SHT_SYMTAB = 2
_SECTION = struct.Struct("<IIQQQQIIQQ")  # Elf64_Shdr
_SYMBOL = struct.Struct("<IBBHQQ")  # Elf64_Sym


def _c_string(data: bytes, offset: int) -> str:
    end = data.index(b"\0", offset)
    return data[offset:end].decode("ascii", "replace")


def symbols(obj: bytes) -> tuple[set[str], set[str]]:
    """(defined, undefined) global symbol names."""
    try:
        if obj[:4] != b"\x7fELF" or obj[4] != 2 or obj[5] != 1:
            raise ModuleFormatError("llvm-cpu executable: object code is not little-endian ELF64")
        shoff, = struct.unpack_from("<Q", obj, 0x28)
        shentsize, shnum = struct.unpack_from("<HH", obj, 0x3A)
        sections = [_SECTION.unpack_from(obj, shoff + i * shentsize) for i in range(shnum)]
        defined: set[str] = set()
        undefined: set[str] = set()
        for sh in sections:
            if sh[1] != _SHT_SYMTAB:
                continue
            strtab = sections[sh[6]]
            names_at, offset, size, entsize = strtab[4], sh[4], sh[5], sh[9] or _SYMBOL.size
            for at in range(offset + entsize, offset + size, entsize):  # entry 0 is null
                name_off, info, _, shndx, _, _ = _SYMBOL.unpack_from(obj, at)
                if not name_off or info >> 4 == 0:  # unnamed or local
                    continue
                name = _c_string(obj, names_at + name_off)
                (undefined if shndx == 0 else defined).add(name)
        return defined, undefined
    except (struct.error, IndexError, ValueError) as e:
        raise ModuleFormatError(f"llvm-cpu executable: malformed object code: {e}") from e
