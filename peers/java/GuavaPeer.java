// Guava's BloomFilter on the harness's own keys: one cell, one JSON line (the `guava` row).
//
// Run by `dedupbench bench` (src/external/) as `java -cp guava.jar GuavaPeer.java --n N --queries Q --fpr P`
// (Java's single-file launcher compiles it in memory; the JVM's default collector). It reads N member
// lines, then Q non-member lines, from stdin into memory (each ended by '\n' alone; malformed UTF-8
// becomes U+FFFD: Guava takes strings), then times one pass each of
// put, mightContain over the members and mightContain over the non-members, JIT compilation included (a
// first pass, as a crawler's first keys pay it). Bytes: Guava's serialized size (its bit array and a
// 6-byte header), with the heap a second, untimed filter's creation allocates beside it. m and k
// are read from the serialized form (strategy byte, k byte, number of longs), and the theory is
// (1 - e^{-kn/m})^k at those.

import com.google.common.hash.BloomFilter;
import com.google.common.hash.Funnels;
import java.io.BufferedInputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.lang.ref.Reference;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.HashSet;

public class GuavaPeer {
    static long arg(String[] args, String name) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals(name)) {
                return (long) Double.parseDouble(args[i + 1]);
            }
        }
        throw new IllegalArgumentException("missing " + name);
    }

    static double fpr(String[] args) {
        for (int i = 0; i + 1 < args.length; i++) {
            if (args[i].equals("--fpr")) {
                return Double.parseDouble(args[i + 1]);
            }
        }
        throw new IllegalArgumentException("missing --fpr");
    }

    /** Reads `count` keys, each ended by '\n' only (a key may hold '\r'; BufferedReader.readLine would split it). */
    static String[] read(InputStream in, int count) throws IOException {
        String[] lines = new String[count];
        ByteArrayOutputStream line = new ByteArrayOutputStream(256);
        for (int i = 0; i < count; i++) {
            line.reset();
            int b;
            while ((b = in.read()) != '\n') {
                if (b < 0) {
                    throw new IOException("stdin ended after " + i + " of " + count + " lines");
                }
                line.write(b);
            }
            lines[i] = line.toString(StandardCharsets.UTF_8);
        }
        return lines;
    }

    /** This process's peak resident set since exec (VmHWM), or -1 where /proc has none. */
    static long peakRssBytes() {
        try {
            for (String line : java.nio.file.Files.readAllLines(java.nio.file.Paths.get("/proc/self/status"))) {
                if (line.startsWith("VmHWM:")) {
                    return 1024L * Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException e) {
            return -1;
        }
        return -1;
    }

    static String json(String s) {
        return "\"" + s.replace("\\", "\\\\").replace("\"", "\\\"") + "\"";
    }

    public static void main(String[] args) throws IOException {
        int n = (int) arg(args, "--n");
        int queries = (int) arg(args, "--queries");
        double p = fpr(args);
        InputStream in = new BufferedInputStream(System.in, 1 << 16);
        String[] members = read(in, n);
        String[] nonMembers = read(in, queries);

        BloomFilter<CharSequence> filter = BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), n, p);
        long t0 = System.nanoTime();
        long reportedNew = 0;
        for (String u : members) {
            if (filter.put(u)) {
                reportedNew++;
            }
        }
        long t1 = System.nanoTime();
        long found = 0;
        for (String u : members) {
            if (filter.mightContain(u)) {
                found++;
            }
        }
        long t2 = System.nanoTime();
        long falsePositives = 0;
        for (String u : nonMembers) {
            if (filter.mightContain(u)) {
                falsePositives++;
            }
        }
        long t3 = System.nanoTime();
        // The heap a filter holds: what this thread allocates while a second one is created (its bit
        // array and objects; a put allocates only garbage). Counted by the JVM per thread, so no collector
        // noise, unlike a difference of heap in use.
        com.sun.management.ThreadMXBean threads =
                (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long allocatedBefore = threads.getCurrentThreadAllocatedBytes();
        BloomFilter<CharSequence> again = BloomFilter.create(Funnels.stringFunnel(StandardCharsets.UTF_8), n, p);
        long heapDelta = threads.getCurrentThreadAllocatedBytes() - allocatedBefore;
        Reference.reachabilityFence(again);
        Reference.reachabilityFence(members);
        Reference.reachabilityFence(nonMembers);

        ByteArrayOutputStream out = new ByteArrayOutputStream();
        filter.writeTo(out);
        byte[] bytes = out.toByteArray();
        int k = bytes[1] & 0xff;
        long m = 64L * ByteBuffer.wrap(bytes, 2, 4).getInt();
        HashSet<String> distinct = new HashSet<>();
        for (String u : members) {
            distinct.add(u);
        }
        double theory = Math.pow(1.0 - Math.exp(-k * (double) distinct.size() / m), k);
        // Debian's jar names its version in its file name (guava.jar links to guava-31.1-jre.jar or is a copy
        // of it); its manifest has none.
        String guava = BloomFilter.class.getPackage().getImplementationVersion();
        if (guava == null) {
            try {
                java.nio.file.Path jar = java.nio.file.Paths.get(
                        BloomFilter.class.getProtectionDomain().getCodeSource().getLocation().toURI());
                guava = "from " + jar.toRealPath();
            } catch (Exception e) {
                guava = "(version unknown)";
            }
        }
        System.out.println("{"
                + "\"structure\":\"guava\""
                + ",\"n\":" + n
                + ",\"n_distinct\":" + distinct.size()
                + ",\"n_reported_new\":" + reportedNew
                + ",\"insert_ns_per_key\":" + (t1 - t0) / (double) Math.max(1, n)
                + ",\"member_query_ns_per_key\":" + (t2 - t1) / (double) Math.max(1, n)
                + ",\"non_member_query_ns_per_key\":" + (t3 - t2) / (double) Math.max(1, queries)
                + ",\"n_member_queries\":" + n
                + ",\"false_negatives\":" + (n - found)
                + ",\"n_non_member_queries\":" + queries
                + ",\"n_false_positives\":" + falsePositives
                + ",\"bits\":" + m
                + ",\"hashes\":" + k
                + ",\"expected_fpr\":" + theory
                + ",\"bytes\":" + bytes.length
                + ",\"bytes_method\":" + json("Guava's serialized size (writeTo)")
                + ",\"heap_delta_bytes\":" + heapDelta
                + ",\"runtime\":" + json("Java " + System.getProperty("java.version"))
                + ",\"library\":" + json("Guava " + guava)
                + ",\"timing\":" + json("one call per key, one pass, JIT compilation included")
                + ",\"peak_rss_bytes\":" + peakRssBytes()
                + "}");
    }
}
