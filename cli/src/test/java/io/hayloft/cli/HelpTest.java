package io.hayloft.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** Every command and subcommand of {@code hayloft} answers {@code --help}: exit 0 and its usage, as the README promises. */
class HelpTest {

    private static void collect(CommandLine c, List<List<String>> out, List<String> path) {
        out.add(path);
        for (var e : c.getSubcommands().entrySet()) {
            if (e.getValue().getCommandSpec().aliases().length > 0 && !e.getKey().equals(e.getValue().getCommandName())) {
                continue; // an alias of a command already walked
            }
            List<String> sub = new ArrayList<>(path);
            sub.add(e.getKey());
            collect(e.getValue(), out, sub);
        }
    }

    @Test
    void everyCommandAnswersHelp() {
        List<List<String>> commands = new ArrayList<>();
        collect(Hayloft.commandLine(), commands, List.of());
        assertThat(commands.size()).isGreaterThan(20);
        for (List<String> path : commands) {
            if (path.equals(List.of("help"))) {
                continue; // picocli's help command takes a command name, not --help
            }
            List<String> args = new ArrayList<>(path);
            args.add("--help");
            StringWriter out = new StringWriter();
            StringWriter err = new StringWriter();
            int exit = Hayloft.run(new PrintWriter(out), new PrintWriter(err), args.toArray(new String[0]));
            assertThat(exit).as("hayloft %s --help: %s", String.join(" ", path), err).isZero();
            assertThat(out.toString()).as("hayloft %s --help", String.join(" ", path)).contains("Usage: hayloft");
        }
    }
}
