"""The secrets `pokerctl up` makes in its data directory on first use and keeps after: the NATS
users' passwords, the compliance key pair, the notary's signing key. (The CA and certificates:
shared/infra/tls.py; the dev token issuer: shared/infra/devissuer.py.)"""

from __future__ import annotations

import json
import secrets
from pathlib import Path

from shared.infra import natsauth
from shared.infra.files import write_private


def nats_passwords(data_dir: Path) -> dict[str, str]:
    """Every NATS user's password (shared/infra/natsauth.py), kept owner-only in
    ``data_dir/nats/passwords.json``: made on first use, the same on every restart."""
    path = data_dir / "nats" / "passwords.json"
    known = json.loads(path.read_text()) if path.exists() else {}
    users = [u.name for u in (*natsauth.USERS, natsauth.SYS)]
    if all(u in known for u in users):
        return known
    passwords = {u: known.get(u) or secrets.token_hex(24) for u in users}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_private(path, json.dumps(passwords, indent=1))
    return passwords


def compliance_key_files(data_dir: Path) -> tuple[Path, Path]:
    """The compliance key pair kept in the data directory (made on first use): the dealer
    seals every hand to its public key; `pokerctl audit` and `history` open hands with the
    private one. A real deployment keeps the private key with compliance, off the cluster."""
    keys = data_dir / "keys"
    private, public = keys / "compliance.key", keys / "compliance.pub"
    if not public.exists():
        from shared.infra.secrecy import ComplianceKey
        ComplianceKey.generate().write(keys)
    return private, public


def notary_key_files(data_dir: Path) -> tuple[Path, Path]:
    """The notary's signing key (``keys/notary.key``, owner-only) and its verifier key
    (``keys/notary.vkey``), made on first use with an origin of their own
    (``poker-tables.local/hands-<random>``): the notary signs the hands' log checkpoints with
    it; witnesses and audits check them with the vkey."""
    keys = data_dir / "keys"
    private, public = keys / "notary.key", keys / "notary.vkey"
    if not private.exists():
        from shared.tlog.note import Signer
        signer = Signer.generate(f"poker-tables.local/hands-{secrets.token_hex(4)}")
        keys.mkdir(parents=True, exist_ok=True)
        write_private(private, signer.skey + "\n")
        public.write_text(signer.verifier.vkey + "\n")
    return private, public
