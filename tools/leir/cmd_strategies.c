/* leir strategies: the catalogue of the 44 strategies. */
#include <string.h>

#include "commands.h"

int cmd_strategies(int argc, char **argv) {
  tool_args a;
  tool_args_init(&a, "strategies", argc, argv);
  bool json = false;
  const char *opt;
  while ((opt = tool_args_next(&a))) {
    if (strcmp(opt, "--json") == 0)
      json = true;
    else
      return tool_usage_error("strategies", "unknown option %s", opt);
  }
  if (a.npositional) return tool_usage_error("strategies", "takes no input");
  for (size_t i = 0; i < leir_strategy_count(); i++) {
    const leir_strategy_info *row = leir_strategy_info_at(i);
    if (!row) return EXIT_INTERNAL;
    leir_strategy_info s = *row;
    if (json) {
      printf("{\"index\":%u,\"name\":\"%s\",\"level\":\"%s\",\"implemented\":%s,\"summary\":", s.index,
             s.name, leir_level_name(s.level), s.implemented ? "true" : "false");
      tool_json_string(stdout, s.summary, strlen(s.summary));
      printf(",\"definition\":");
      tool_json_string(stdout, s.definition, strlen(s.definition));
      printf(",\"benefit\":");
      tool_json_string(stdout, s.benefit, strlen(s.benefit));
      printf("}\n");
    } else {
      printf("%2u  %-56s %-8s %-3s  %s\n", s.index, s.name, leir_level_name(s.level),
             s.implemented ? "yes" : "no", s.summary);
    }
  }
  return EXIT_OK;
}
