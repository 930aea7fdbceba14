"""The `sessionctx` command, one module per group of commands.

- `app`: the `main` group, the one place a library error (any `SessionctxError`) becomes
  'sessionctx: MESSAGE' and exit 2 (`fail` for a command's own verdicts), JSON output, and
  `run`, the program itself, which does without the cyclic collector.
- `loader`: the one way a command reads its session (`load`: PATH in any `--from` format or a
  store's `--session`, on the `--leaf` branch) or finds where to append (`open_target`).
- `options`: the shared options, each group handed to a command as one value
  (`source_options` -> `source`, `build_options` -> `options`, `provider_options` -> `request`).
- `context_commands` (build, explain), `check_command` (check), `store_commands` (sessions,
  import, export), `compaction_commands` (compact, restore, budget), `report_command` (report),
  `repair_commands` (repair), `proxy_commands` (proxy, proxy log, run).

A new command goes in a new module here (or the group module it belongs to): decorate it with
`@main.command()` from `sessionctx.cli.app`, take its session with `@source_options()` and
`load(source)`, let library errors propagate (they exit 2), and import the module below so
the command is registered. Keep heavy imports inside the command: `sessionctx --help` stays fast.
"""

from sessionctx.cli import (
    check_command,
    compaction_commands,
    context_commands,
    proxy_commands,
    repair_commands,
    report_command,
    store_commands,
)
from sessionctx.cli.app import main, run

__all__ = ["check_command", "compaction_commands", "context_commands", "main", "proxy_commands",
           "repair_commands", "report_command", "run", "store_commands"]
