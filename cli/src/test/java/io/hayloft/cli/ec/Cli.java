package io.hayloft.cli.ec;

import io.hayloft.cli.Hayloft;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;

/** Runs {@code hayloft} in-process with captured output, and makes test files. */
final class Cli {

    /** What a command printed and returned. */
    record Outcome(int exit, String out, String err) {
        @Override
        public String toString() {
            return "exit " + exit + "\n--- out:\n" + out + "--- err:\n" + err;
        }
    }

    private Cli() {
    }

    static Outcome run(Object... args) {
        String[] a = new String[args.length];
        for (int i = 0; i < args.length; i++) {
            a[i] = String.valueOf(args[i]);
        }
        StringWriter out = new StringWriter();
        StringWriter err = new StringWriter();
        int exit = Hayloft.run(new PrintWriter(out, true), new PrintWriter(err, true), a);
        return new Outcome(exit, out.toString(), err.toString());
    }

    static byte[] randomFile(Path p, int length, long seed) throws IOException {
        byte[] b = new byte[length];
        new Random(seed).nextBytes(b);
        Files.write(p, b);
        return b;
    }

    /** Flips every bit of {@code n} bytes of {@code file} at a random offset; returns the offset. */
    static long corrupt(Path file, int n, Random rnd) throws IOException {
        byte[] b = Files.readAllBytes(file);
        int off = rnd.nextInt(b.length - n + 1);
        for (int i = 0; i < n; i++) {
            b[off + i] ^= (byte) 0xFF;
        }
        Files.write(file, b);
        return off;
    }
}
