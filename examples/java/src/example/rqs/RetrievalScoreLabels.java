package example.rqs;

import java.util.Map;

/**
 * The two primary score labels, and the only place that reads a legacy one.
 *
 * <p>New emissions carry {@link #DENSE} or {@link #HYBRID} only; a label a store wrote before the spec
 * ({@code l2_distance}, {@code rrf_fused}, {@code bm25_only_no_dense}) is canonicalized before anything
 * branches on it.
 */
public final class RetrievalScoreLabels {
    public static final String DENSE = "dense";
    public static final String HYBRID = "hybrid";

    private static final Map<String, String> CANONICAL = Map.of(
            DENSE, DENSE,
            HYBRID, HYBRID,
            "l2_distance", DENSE,
            "rrf_fused", HYBRID,
            "bm25_only_no_dense", HYBRID);

    private RetrievalScoreLabels() {}

    /** {@code dense} or {@code hybrid}; an unknown label is the caller's error, never guessed at. */
    public static String canonicalize(String label) {
        String canonical = CANONICAL.get(label);
        if (canonical == null) {
            throw new IllegalArgumentException("unknown scoreLabel '" + label + "'");
        }
        return canonical;
    }

    public static boolean isDense(String label) {
        return DENSE.equals(canonicalize(label));
    }
}
