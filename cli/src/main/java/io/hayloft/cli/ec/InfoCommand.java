package io.hayloft.cli.ec;

import io.hayloft.erasure.kernel.BackendInfo;
import java.io.PrintWriter;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code hayloft ec info}: the erasure backend in use, why the others are off, the ISA-L version and
 * the CPU features, as {@link BackendInfo} reports them. Stateless.
 */
@Command(name = "info", mixinStandardHelpOptions = true,
        description = "Print the erasure-coding backend in use, why others are unavailable, and CPU features.")
public final class InfoCommand implements Callable<Integer> {

    @CommandLine.Spec
    CommandLine.Model.CommandSpec spec;

    @Override
    public Integer call() {
        PrintWriter out = spec.commandLine().getOut();
        lines().forEach(out::println);
        out.flush();
        return 0;
    }

    /** The report lines, {@code key: value} each (backend, why others are off, ISA-L version, CPU features). */
    static List<String> lines() {
        return BackendInfo.lines();
    }
}
