package io.hayloft.cli.client;

import io.hayloft.client.HayloftClient;
import io.hayloft.format.wire.PhotoId;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/**
 * {@code hayloft get ID [-o FILE]}: writes a photo to a file or to standard output.
 *
 * <p>Not thread-safe (one command run).
 */
@Command(name = "get", mixinStandardHelpOptions = true, description = "Read a photo by id (volume,key,alt,cookie).")
public final class GetCommand implements Callable<Integer> {
    @Mixin
    ClientOptions client;

    @Parameters(index = "0", paramLabel = "ID", description = "Photo id as printed by 'hayloft put'.")
    String id;

    @Option(names = {"-o", "--output"}, paramLabel = "FILE", description = "Write here instead of standard output.")
    Path output;

    @Override
    public Integer call() throws IOException {
        PhotoId photo = PhotoId.parse(id);
        try (HayloftClient c = client.client()) {
            if (output != null) {
                c.get(photo, output);
            } else {
                try (InputStream in = c.getStream(photo)) {
                    in.transferTo(System.out);
                }
                System.out.flush();
            }
        }
        return 0;
    }
}
