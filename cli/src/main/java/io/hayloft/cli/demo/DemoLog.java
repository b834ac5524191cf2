package io.hayloft.cli.demo;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.encoder.PatternLayoutEncoder;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.Appender;
import ch.qos.logback.core.FileAppender;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import org.slf4j.LoggerFactory;

/**
 * Sends every log line of the process to a file while the demo runs, so that the servers' logs do
 * not cut through the demo's tables; {@link #close()} puts the previous appenders back. When logging
 * is not Logback (a library user's own binding), does nothing.
 */
final class DemoLog implements AutoCloseable {
    private final Logger root;
    private final List<Appender<ILoggingEvent>> previous = new ArrayList<>();
    private final FileAppender<ILoggingEvent> file;

    private DemoLog(Logger root, FileAppender<ILoggingEvent> file) {
        this.root = root;
        this.file = file;
    }

    /** Redirects the root logger to {@code path} (appending). */
    static DemoLog to(Path path) {
        if (!(LoggerFactory.getILoggerFactory() instanceof LoggerContext ctx)) {
            return new DemoLog(null, null);
        }
        Logger root = ctx.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
        PatternLayoutEncoder enc = new PatternLayoutEncoder();
        enc.setContext(ctx);
        enc.setPattern("%d{HH:mm:ss.SSS} %-5level [%thread] %logger{24} - %msg%n");
        enc.start();
        FileAppender<ILoggingEvent> file = new FileAppender<>();
        file.setContext(ctx);
        file.setName("demo-file");
        file.setFile(path.toString());
        file.setAppend(true);
        file.setEncoder(enc);
        file.start();
        DemoLog log = new DemoLog(root, file);
        for (Iterator<Appender<ILoggingEvent>> it = root.iteratorForAppenders(); it.hasNext(); ) {
            log.previous.add(it.next());
        }
        root.addAppender(file);
        log.previous.forEach(a -> root.detachAppender(a));
        return log;
    }

    @Override
    public void close() {
        if (root == null) {
            return;
        }
        previous.forEach(root::addAppender);
        root.detachAppender(file);
        file.stop();
    }
}
