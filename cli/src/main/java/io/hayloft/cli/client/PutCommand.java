package io.hayloft.cli.client;

import io.hayloft.client.Futures;
import io.hayloft.client.HayloftClient;
import io.hayloft.client.PutResult;
import io.hayloft.client.Upload;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/**
 * {@code hayloft put FILE...}: stores each file as a new photo and prints {@code ID FILE} per line
 * (with {@code --url}, the URL too). Several files go as one batch (one multi-write per replica).
 *
 * <p>Not thread-safe (one command run).
 */
@Command(name = "put", mixinStandardHelpOptions = true,
        description = "Store files as new photos; prints one 'ID FILE' line per file.")
public final class PutCommand implements Callable<Integer> {
    @Spec
    picocli.CommandLine.Model.CommandSpec spec;

    @Mixin
    ClientOptions client;

    @Parameters(arity = "1..*", paramLabel = "FILE", description = "Files to store.")
    List<Path> files;

    @Option(names = "--alt", defaultValue = "0", description = "Alternate key to store them under (default: ${DEFAULT-VALUE}).")
    int alt;

    @Option(names = "--url", description = "Also print a direct URL of each photo.")
    boolean url;

    @Override
    public Integer call() {
        List<Upload> uploads = new ArrayList<>(files.size());
        for (Path f : files) {
            if (!Files.isRegularFile(f)) {
                throw new IllegalArgumentException("no such file: " + f);
            }
            uploads.add(Upload.empty().alt(alt, f));
        }
        PrintWriter out = spec.commandLine().getOut();
        try (HayloftClient c = client.client()) {
            List<PutResult> results = Futures.await(c.putAllUploadsAsync(uploads));
            for (int i = 0; i < results.size(); i++) {
                PutResult r = results.get(i);
                out.println(r.id() + " " + files.get(i) + (url ? " " + r.url() : ""));
            }
        }
        out.flush();
        return 0;
    }
}
