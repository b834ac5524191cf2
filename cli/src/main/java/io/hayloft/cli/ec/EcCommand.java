package io.hayloft.cli.ec;

import io.hayloft.erasure.CodecKind;
import java.io.PrintWriter;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code hayloft ec}: offline erasure-coding tools that work on plain files, for operators and for
 * trying the codes out. See {@code docs/ec-cli.md}. Every subcommand is stateless; one runs per JVM.
 */
@Command(name = "ec", mixinStandardHelpOptions = true,
        description = "Erasure-code a file into block files, verify, repair and decode them offline.",
        subcommands = {EncodeCommand.class, VerifyCommand.class, RepairCommand.class, DecodeCommand.class,
                InfoCommand.class, CommandLine.HelpCommand.class})
public final class EcCommand implements Runnable {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public void run() {
        spec.commandLine().usage(spec.commandLine().getOut());
    }

    /** Parses {@code --codec} values with the message {@link CodecKind#fromWireName} gives. */
    public static final class CodecConverter implements CommandLine.ITypeConverter<CodecKind> {
        @Override
        public CodecKind convert(String value) {
            try {
                return CodecKind.fromWireName(value);
            } catch (IllegalArgumentException e) {
                throw new CommandLine.TypeConversionException(e.getMessage());
            }
        }
    }

    /** The {@code --progress} option every long-running subcommand shares. */
    public static final class ProgressOption {
        @CommandLine.Option(names = "--progress",
                description = "Show a progress bar on stderr even when it is not a terminal.")
        boolean progress;

        public Progress.Factory factory(CommandLine.Model.CommandSpec spec) {
            return Progress.Factory.of(spec.commandLine().getErr(), progress);
        }
    }

    static String seconds(long nanos) {
        return String.format(Locale.ROOT, "%.3f s", nanos / 1e9);
    }

    static String rate(long bytes, long nanos) {
        return nanos <= 0 ? "-" : String.format(Locale.ROOT, "%.1f MiB/s", bytes / (1024.0 * 1024.0) / (nanos / 1e9));
    }

    static String percent(long part, long whole) {
        return whole == 0 ? "-" : String.format(Locale.ROOT, "%.1f%%", 100.0 * part / whole);
    }

    static String describe(Manifest m) {
        StripeLayout l = m.layout();
        return m.codec().wireName() + " (" + l.k() + "," + l.r() + "), block size " + SizeConverter.format(l.blockSize())
                + ", " + l.stripes() + " stripe" + (l.stripes() == 1 ? "" : "s") + ", " + m.blocks().size()
                + " block files, original " + SizeConverter.format(l.length()) + " (" + l.length() + " bytes)";
    }

    static void flush(PrintWriter... ws) {
        for (PrintWriter w : ws) {
            w.flush();
        }
    }
}
