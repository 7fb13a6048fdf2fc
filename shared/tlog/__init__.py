"""Transparency-log pieces: the RFC 6962 Merkle tree (merkle.py), C2SP signed notes,
checkpoints and cosignatures (note.py), the hands' leaves (hands.py), the witness
(witness.py) and the streams the notary keeps (store.py)."""
