package dev.lantern.cli;

import dev.lantern.tensor.Tensor;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * What {@code run} prints for a model's outputs: one {@link OutputSummary} line each and, for a
 * language-model head (last dim = the vocabulary), the top token ids of the last position
 * ({@link TopTokens}); the same as JSON objects for {@code --json}.
 */
record OutputReport(List<String> lines, List<Map<String, Object>> json) {
    static OutputReport of(Map<String, Tensor> outputs, Long vocab) {
        List<String> lines = new ArrayList<>();
        List<Map<String, Object>> json = new ArrayList<>();
        int width = outputs.keySet().stream().mapToInt(String::length).max().orElse(1);
        for (Map.Entry<String, Tensor> e : outputs.entrySet()) {
            OutputSummary s = OutputSummary.of(e.getKey(), e.getValue());
            Map<String, Object> j = s.json();
            lines.add("output    " + s.line(width));
            if (TopTokens.isHead(e.getValue(), vocab)) {
                List<long[]> top = TopTokens.of(e.getValue());
                j.put("top_tokens", top.stream().map(r -> Arrays.stream(r).boxed().toList()).toList());
                for (int r = 0; r < Math.min(top.size(), TopTokens.PRINTED_ROWS); r++) {
                    lines.add("top" + TopTokens.K + "      " + e.getKey() + TopTokens.where(e.getValue(), r) + "  "
                            + Arrays.toString(top.get(r)).replace(" ", ""));
                }
                if (top.size() > TopTokens.PRINTED_ROWS) {
                    lines.add("top" + TopTokens.K + "      (" + (top.size() - TopTokens.PRINTED_ROWS) + " more rows in --json)");
                }
            }
            json.add(j);
        }
        return new OutputReport(lines, json);
    }
}
