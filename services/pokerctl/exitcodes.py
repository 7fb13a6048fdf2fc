"""pokerctl's exit codes (failures.py says how a command fails with them; a leaf module, so
that any command may import them).

The exit codes, one per meaning, the same in every command (the README's table):

- :data:`OK` 0: done; an audit or a verification passed.
- :data:`FAILED` 1: the command ran and the answer is no: an audit or a hand's evidence that
  does not verify, a run whose checks failed, an operation the server refused (a rule of the
  game, a permission).
- :data:`USAGE` 2: the command line is wrong: a bad or missing argument, a file given that
  cannot be read, a flag retired (argparse's own errors exit 2 too).
- :data:`NOT_FOUND` 3: what was named does not exist: no such table (or hand) in the log or
  at the table service.
- :data:`UNREACHABLE` 4: a server did not answer, or could not be trusted (NATS, the table
  service, the wallet; a certificate of another CA), or its log did not answer behind it.

So a script tells "the log fails its audit" (1) from "I typed the table's name wrong" (3) and
from "nothing was running" (4).
"""

#: the exit codes (the docstring says what each means)
OK, FAILED, USAGE, NOT_FOUND, UNREACHABLE = 0, 1, 2, 3, 4
