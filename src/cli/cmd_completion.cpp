// `kbench completion bash|zsh`: shell completion written from the command-line definition itself
// (CLI11's tree of commands and options), so that it lists exactly the commands and options this
// binary has. The install puts both into the shells' completion folders (cmake/KbenchInstall.cmake).
#include <fmt/format.h>

#include <iostream>
#include <string>
#include <vector>

#include "cli/app.h"

namespace kb::cli {

namespace {

struct CommandNode {
  std::string path;                  // "kbench results list"
  std::vector<std::pair<std::string, std::string>> subcommands;  // name, description
  std::vector<std::pair<std::string, std::string>> options;      // --name or -n, description
  std::vector<std::string> value_options;                         // options that take a value
  bool positionals = false;          // takes operands (problem names, folders)
};

// Internal commands (the worker's `__worker`) are not offered.
bool internal(const CLI::App* a) { return a->get_name().rfind("__", 0) == 0; }

void collect(const CLI::App& app, const std::string& path, std::vector<CommandNode>& out) {
  CommandNode n;
  n.path = path;
  for (const CLI::Option* o : app.get_options()) {
    if (o->get_positional() && !o->nonpositional()) {
      n.positionals = true;
      continue;
    }
    // A flag expects no value; anything else completes its value as a file name.
    const bool takes_value = o->get_expected_max() != 0;
    for (const auto& l : o->get_lnames()) {
      n.options.emplace_back("--" + l, o->get_description());
      if (takes_value) n.value_options.push_back("--" + l);
    }
    for (const auto& s : o->get_snames()) {
      n.options.emplace_back("-" + s, o->get_description());
      if (takes_value) n.value_options.push_back("-" + s);
    }
    if (o->get_positional()) n.positionals = true;
  }
  std::vector<const CLI::App*> subs = app.get_subcommands([](const CLI::App* a) { return !internal(a); });
  for (const CLI::App* s : subs) n.subcommands.emplace_back(s->get_name(), s->get_description());
  out.push_back(n);
  for (const CLI::App* s : subs) collect(*s, path + " " + s->get_name(), out);
}

std::string join(const std::vector<std::string>& v, const char* sep) {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::vector<std::string> names(const std::vector<std::pair<std::string, std::string>>& v) {
  std::vector<std::string> out;
  for (const auto& [name, _] : v) out.push_back(name);
  return out;
}

// One line of the description, single-quoted for a shell, ':' escaped for zsh's _describe.
std::string zsh_item(const std::string& name, const std::string& description) {
  std::string d = description.substr(0, description.find('\n'));
  std::string item;
  for (char c : name) item += (c == ':' ? std::string("\\:") : std::string(1, c));
  item += ':';
  item += d;
  std::string quoted = "'";
  for (char c : item) quoted += (c == '\'' ? std::string("'\\''") : std::string(1, c));
  return quoted + "'";
}

std::string bash_script(const std::vector<CommandNode>& nodes) {
  std::string walk, words, values;
  for (const auto& n : nodes) {
    for (const auto& [sub, _] : n.subcommands) walk += fmt::format("      \"{} {}\") cmdpath=\"$cmdpath $w\" ;;\n", n.path, sub);
    std::vector<std::string> all = names(n.subcommands);
    for (const auto& o : names(n.options)) all.push_back(o);
    words += fmt::format("    \"{}\") words=\"{}\"; operands={} ;;\n", n.path, join(all, " "), n.positionals ? 1 : 0);
    if (!n.value_options.empty())
      values += fmt::format("    \"{}\") case \"$prev\" in {}) COMPREPLY=($(compgen -f -- \"$cur\")); return ;; esac ;;\n", n.path,
                            join(n.value_options, "|"));
  }
  return fmt::format(R"(# bash completion for kbench, written by `kbench completion bash` from its command-line definition.
_kbench() {{
  local cur=${{COMP_WORDS[COMP_CWORD]}} prev=${{COMP_WORDS[COMP_CWORD-1]}} cmdpath=kbench words operands i w
  for ((i = 1; i < COMP_CWORD; i++)); do
    w=${{COMP_WORDS[i]}}
    case "$cmdpath $w" in
{}    esac
  done
  # The value of an option that takes one: a file name (folders, TOML files, run directories).
  case "$cmdpath" in
{}  esac
  case "$cmdpath" in
{}  esac
  COMPREPLY=($(compgen -W "$words" -- "$cur"))
  # Operands (problems, solution folders): file names too, unless an option is being typed.
  if ((operands)) && [[ $cur != -* ]]; then COMPREPLY+=($(compgen -f -- "$cur")); fi
}}
complete -o filenames -F _kbench kbench
)",
                     walk, values, words);
}

std::string zsh_script(const std::vector<CommandNode>& nodes) {
  std::string walk, cases;
  for (const auto& n : nodes) {
    for (const auto& [sub, _] : n.subcommands) walk += fmt::format("      (\"{} {}\") cmdpath=\"$cmdpath ${{words[i]}}\" ;;\n", n.path, sub);
    std::vector<std::string> subs, opts;
    for (const auto& [name, d] : n.subcommands) subs.push_back(zsh_item(name, d));
    for (const auto& [name, d] : n.options) opts.push_back(zsh_item(name, d));
    cases += fmt::format("    (\"{}\")\n      subs=({})\n      opts=({})\n      values=({})\n      operands={} ;;\n", n.path,
                         join(subs, " "), join(opts, " "), join(n.value_options, " "), n.positionals ? 1 : 0);
  }
  return fmt::format(R"(#compdef kbench
# zsh completion for kbench, written by `kbench completion zsh` from its command-line definition.
_kbench() {{
  local cmdpath=kbench i operands=0
  local -a subs opts values
  for ((i = 2; i < CURRENT; i++)); do
    case "$cmdpath ${{words[i]}}" in
{}    esac
  done
  case "$cmdpath" in
{}  esac
  # The value of an option that takes one: a file name (folders, TOML files, run directories).
  if (( ${{values[(Ie)${{words[CURRENT-1]}}]}} )); then _files; return; fi
  if [[ ${{words[CURRENT]}} == -* ]]; then
    _describe -t options 'option' opts
  else
    (( ${{#subs}} )) && _describe -t commands 'command' subs
    (( operands )) && _files
    (( ${{#subs}} || operands )) || _describe -t options 'option' opts
  fi
}}
_kbench "$@"
)",
                     walk, cases);
}

}  // namespace

void register_completion_command(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("completion", "Print shell completion for bash or zsh (docs/install.md: where it goes)");
  static std::string shell;
  cmd->add_option("shell", shell, "bash or zsh")->required()->check(CLI::IsMember({"bash", "zsh"}));
  cmd->callback([&app, &exit_code] {
    std::vector<CommandNode> nodes;
    collect(app, "kbench", nodes);
    std::cout << (shell == "bash" ? bash_script(nodes) : zsh_script(nodes));
    exit_code = kExitPass;
  });
}

}  // namespace kb::cli
