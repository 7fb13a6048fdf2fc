"""pokerctl keys: the compliance role's key pair, and the ``--key`` option of the commands
that open sealed cards (audit, history, bots).

    pokerctl keys generate DIR     # DIR/compliance.key (owner-only) and DIR/compliance.pub
    pokerctl keys notary DIR [--name ORIGIN]   # DIR/notary.key (owner-only), DIR/notary.vkey
    pokerctl keys witness DIR --name NAME      # DIR/witness.key (owner-only), witness.vkey

The notary signs the hands' log checkpoints with its key (POKER_NOTARY_KEY; its name is the
log's origin); a witness cosigns them with its own (`pokerctl witness serve`). Both are
Ed25519 keys in the format of Go's golang.org/x/mod/sumdb/note (``PRIVATE+KEY+name+id+key``),
their public halves c2sp.org/signed-note verifier keys (``name+id+key``).

The dealer is given the public key (POKER_COMPLIANCE_PUBLIC_KEY) and seals every hand's key to
it; the private key stays with compliance. A command that opens hands takes ``--key FILE``
(repeatable: keys rotated over the years), else POKER_COMPLIANCE_KEY (files separated by
commas), else the key `pokerctl up` keeps in its data directory, but only when the command
reads that `up`'s own log (its NATS address): a key never opens, or is recorded as opening,
another log's hands (an export given with --file, another server given with --nats).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from shared.infra.secrecy import ComplianceKey, ComplianceKeyring, SecrecyError

from .datadir import default_data_dir
from .failures import USAGE


def _default_key_files(args: argparse.Namespace) -> list[str]:
    if os.environ.get("POKER_COMPLIANCE_KEY"):
        return [p for p in os.environ["POKER_COMPLIANCE_KEY"].split(",") if p]
    data = default_data_dir()
    local = data / "keys" / "compliance.key"
    if not local.exists() or getattr(args, "file", None) or not _reads(data, args):
        return []
    return [str(local)]


def _reads(data_dir: Path, args: argparse.Namespace) -> bool:
    """Whether the command reads the log of the `up` whose data directory is ``data_dir``: its
    --nats (or --from) names that `up`'s NATS address."""
    url = getattr(args, "nats", None) or getattr(args, "source", None)
    if not url:
        return False
    try:
        ours = (data_dir / "nats" / "url").read_text().strip()
    except OSError:
        return False
    return _address(url) == _address(ours)


def _address(url: str) -> str:
    """host:port of a NATS URL (its scheme, user and password left out)."""
    rest = url.split("://", 1)[-1]
    return rest.rsplit("@", 1)[-1].split("/", 1)[0].lower()


def add_key_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument("--key", action="append", default=None, metavar="FILE",
                   help="the compliance private key that opens sealed cards (repeatable; "
                        "default POKER_COMPLIANCE_KEY, else `pokerctl up`'s when reading "
                        "its log)")


def key_files(args: argparse.Namespace) -> list[str]:
    """The key files of ``--key``, or the defaults."""
    return list(args.key) if args.key else _default_key_files(args)


def keyring_from(args: argparse.Namespace) -> ComplianceKeyring | None:
    """The keyring of ``--key`` (or the defaults); None when there is no key at all. A key
    file that cannot be read is an error the user must see: SecrecyError."""
    files = key_files(args)
    return ComplianceKeyring.from_files(files) if files else None


def _generate(args: argparse.Namespace) -> int:
    target = Path(args.dir)
    if (target / "compliance.key").exists() and not args.force:
        print(f"pokerctl keys: {target / 'compliance.key'} exists (use --force to replace "
              f"it; hands sealed to the old key then need the old key to open)", file=sys.stderr)
        return USAGE
    try:
        private, public = ComplianceKey.generate().write(target)
    except (OSError, SecrecyError) as exc:
        print(f"pokerctl keys: {exc}", file=sys.stderr)
        return USAGE
    print(f"private key {private} (keep it with compliance, off the cluster)")
    print(f"public key  {public} (give it to the dealer: POKER_COMPLIANCE_PUBLIC_KEY)")
    return 0


def _tlog_key(args: argparse.Namespace) -> int:
    from shared.infra.files import write_private
    from shared.tlog.note import COSIGNATURE_V1, ED25519, NoteError, Signer
    kind = args.keys_command  # notary or witness
    target = Path(args.dir)
    private, public = target / f"{kind}.key", target / f"{kind}.vkey"
    if private.exists() and not args.force:
        print(f"pokerctl keys: {private} exists (use --force to replace it; checkpoints "
              f"signed with the old key then need the old vkey to check)", file=sys.stderr)
        return USAGE
    name = args.name or f"poker-tables.local/hands-{os.urandom(4).hex()}"
    try:
        signer = Signer.generate(name, ED25519 if kind == "notary" else COSIGNATURE_V1)
        target.mkdir(parents=True, exist_ok=True)
        write_private(private, signer.skey + "\n")
        public.write_text(signer.verifier.vkey + "\n")
    except (OSError, NoteError) as exc:
        print(f"pokerctl keys: {exc}", file=sys.stderr)
        return USAGE
    print(f"private key {private} (the {kind}'s alone)")
    print(f"public key  {public}: {signer.verifier.vkey}")
    return 0


def register(sub: argparse._SubParsersAction, help: str = "") -> None:
    keys = sub.add_parser("keys", help=help)
    ksub = keys.add_subparsers(dest="keys_command", required=True)
    g = ksub.add_parser("generate", help="make a compliance key pair in DIR")
    g.add_argument("dir", metavar="DIR")
    g.add_argument("--force", action="store_true", help="replace an existing key pair")
    g.set_defaults(run=_generate)
    n = ksub.add_parser("notary", help="make the notary's checkpoint signing key in DIR")
    n.add_argument("dir", metavar="DIR")
    n.add_argument("--name", default=None,
                   help="the log's origin, a schema-less URL (default: a random one)")
    n.add_argument("--force", action="store_true", help="replace an existing key")
    n.set_defaults(run=_tlog_key)
    w = ksub.add_parser("witness", help="make a witness's cosignature key in DIR")
    w.add_argument("dir", metavar="DIR")
    w.add_argument("--name", required=True, help="the witness's name, a schema-less URL")
    w.add_argument("--force", action="store_true", help="replace an existing key")
    w.set_defaults(run=_tlog_key)
