package io.hayloft.cli.ec;

import io.hayloft.erasure.kernel.GfKernel;
import io.hayloft.erasure.kernel.Kernels;
import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code hayloft ec info}: the erasure backend in use, why the others are off, and (when the erasure
 * module provides {@code BackendInfo}) the ISA-L version and CPU features. Stateless.
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

    /**
     * The report lines, {@code key: value} each: {@code io.hayloft.erasure.kernel.BackendInfo#lines()}
     * (backend, ISA-L version, CPU features) when the erasure module has it, else the same first lines
     * straight from {@link Kernels}.
     */
    static List<String> lines() {
        try {
            Class<?> info = Class.forName("io.hayloft.erasure.kernel.BackendInfo");
            List<String> out = new ArrayList<>();
            for (Object line : (List<?>) info.getMethod("lines").invoke(null)) {
                out.add(String.valueOf(line));
            }
            return out;
        } catch (ReflectiveOperationException | ClassCastException | LinkageError e) {
            return fromKernels();
        }
    }

    static List<String> fromKernels() {
        List<String> out = new ArrayList<>();
        GfKernel best = Kernels.best();
        out.add("backend: " + best.name() + " (" + best.description() + ")");
        out.add("requested: " + Kernels.requested() + " (-D" + Kernels.PROPERTY + " or " + Kernels.ENV
                + ": auto, native, vector, java)");
        List<String> names = new ArrayList<>();
        Kernels.available().forEach(k -> names.add(k.name()));
        out.add("available: " + String.join(", ", names));
        for (Map.Entry<String, String> e : Kernels.unavailable().entrySet()) {
            out.add(e.getKey() + ": off: " + e.getValue());
        }
        return out;
    }
}
