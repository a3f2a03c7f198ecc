# The C part of grep's trigram signatures (_signatures.c).
import numpy as np

def set_bits(block: np.ndarray, shift: int, columns: list[int], texts: list[str], /) -> None: ...
