/* Every `leir` subcommand: one file each (cmd_NAME.c), one row in
 * commands.c. */
#ifndef LEIR_TOOL_COMMANDS_H
#define LEIR_TOOL_COMMANDS_H

#include "tool.h"

int cmd_fmt(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_hash(int argc, char **argv);
int cmd_strategies(int argc, char **argv);
int cmd_candidates(int argc, char **argv);
int cmd_apply(int argc, char **argv);
int cmd_explain(int argc, char **argv);
int cmd_ground(int argc, char **argv);
int cmd_lower(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_verify(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_workloads(int argc, char **argv);
int cmd_optimize(int argc, char **argv);
int cmd_db(int argc, char **argv);
int cmd_dataset(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_benchmark(int argc, char **argv);

extern const tool_command tool_commands[];
extern const size_t tool_command_count;

#endif
