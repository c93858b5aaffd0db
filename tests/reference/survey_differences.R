# Reference values for differences on weighted and stratified validation samples from
# R's survey package, used by tests/test_weighted_tables.py.
#
# Run from the repository root:
#   Rscript tests/reference/survey_differences.R
#
# Writes tests/reference/survey_differences.json: 8 data sets stratified by classifier
# A's prediction, each with its texts (stratum, person, subgroup, truth, pred_a, pred_b,
# weight, fpc) and, per design ("fpc": texts within strata with the finite population
# correction; "clusters": persons as clusters nested in strata), what survey computes:
#   - the paired difference A minus B of recall, precision and F1:
#     svycontrast(svytotal(~tp_a + fp_a + fn_a + tp_b + fp_b + fn_b, design),
#                 quote(tp_a / (tp_a + fn_a) - tp_b / (tp_b + fn_b)))  (and alike);
#   - the domain difference of recall, precision and F1 of subgroup "b" minus "a":
#     the same contrast of the cells multiplied by the subgroup indicator (the texts
#     outside a subgroup stay in the design with zero cells, as subset() does).
# Numbers are written with sprintf("%.17g"), so they round-trip exactly to doubles.

suppressPackageStartupMessages(library(survey))

out_dir <- if (file.exists("tests/reference")) "tests/reference" else "."
cat("R:", R.version.string, "\n")
cat("survey:", as.character(packageVersion("survey")), "\n")
set.seed(20261203)

f17 <- function(x) {
  x <- as.numeric(x)
  if (is.na(x) || !is.finite(x)) "null" else sprintf("%.17g", x)
}
vec <- function(x, fmt = "%d") paste0("[", paste(sprintf(fmt, x), collapse = ", "), "]")
vecd <- function(x) paste0("[", paste(vapply(x, f17, ""), collapse = ", "), "]")
vecs <- function(x) paste0("[", paste(sprintf("\"%s\"", x), collapse = ", "), "]")

make_data <- function(id) {
  n_pos <- sample(c(40, 120, 300), 1)
  n_neg <- sample(c(40, 120, 300), 1)
  N_pos <- n_pos * sample(3:12, 1)
  N_neg <- n_neg * sample(20:120, 1)
  persons <- sample(c(12, 30, 80), 1)
  add <- function(stratum, pred, n, N, rate) {
    person <- sample.int(persons, n, replace = TRUE)
    p <- plogis(qlogis(rate) + rnorm(persons, 0, 0.8)[person])
    truth <- rbinom(n, 1, p)
    flip <- rbinom(n, 1, 0.12)  # B disagrees with A on about 12% of texts
    data.frame(stratum = stratum, person = person,
               subgroup = ifelse(person %% 2 == 0, "a", "b"), truth = truth,
               pred_a = pred, pred_b = ifelse(flip == 1, 1 - pred, pred),
               weight = N / n, fpc = N)
  }
  df <- rbind(add(1, 1, n_pos, N_pos, runif(1, 0.6, 0.95)),
              add(2, 0, n_neg, N_neg, runif(1, 0.03, 0.12)))
  for (k in c("a", "b")) {
    pk <- df[[paste0("pred_", k)]]
    df[[paste0("tp_", k)]] <- as.numeric(df$truth == 1 & pk == 1)
    df[[paste0("fp_", k)]] <- as.numeric(df$truth == 0 & pk == 1)
    df[[paste0("fn_", k)]] <- as.numeric(df$truth == 1 & pk == 0)
  }
  for (g in c("a", "b")) {
    inside <- as.numeric(df$subgroup == g)
    df[[paste0("tp_", g, "g")]] <- df$tp_a * inside
    df[[paste0("fp_", g, "g")]] <- df$fp_a * inside
    df[[paste0("fn_", g, "g")]] <- df$fn_a * inside
  }
  df
}

contrast <- function(design, formula, expr) {
  r <- svycontrast(svytotal(formula, design), expr)
  sprintf("{\"estimate\": %s, \"se\": %s}", f17(coef(r)[1]), f17(SE(r)[1]))
}

differences <- function(design) {
  paired <- ~tp_a + fp_a + fn_a + tp_b + fp_b + fn_b
  domain <- ~tp_ag + fp_ag + fn_ag + tp_bg + fp_bg + fn_bg
  paste0(
    "{\"paired\": {",
    "\"recall\": ", contrast(design, paired,
      quote(tp_a / (tp_a + fn_a) - tp_b / (tp_b + fn_b))),
    ", \"precision\": ", contrast(design, paired,
      quote(tp_a / (tp_a + fp_a) - tp_b / (tp_b + fp_b))),
    ", \"f1\": ", contrast(design, paired,
      quote(2 * tp_a / (2 * tp_a + fp_a + fn_a) - 2 * tp_b / (2 * tp_b + fp_b + fn_b))),
    "}, \"domain\": {",
    "\"recall\": ", contrast(design, domain,
      quote(tp_bg / (tp_bg + fn_bg) - tp_ag / (tp_ag + fn_ag))),
    ", \"precision\": ", contrast(design, domain,
      quote(tp_bg / (tp_bg + fp_bg) - tp_ag / (tp_ag + fp_ag))),
    ", \"f1\": ", contrast(design, domain,
      quote(2 * tp_bg / (2 * tp_bg + fp_bg + fn_bg) - 2 * tp_ag / (2 * tp_ag + fp_ag + fn_ag))),
    "}}")
}

records <- c()
for (id in 1:8) {
  df <- make_data(id)
  fpc_design <- svydesign(ids = ~1, strata = ~stratum, weights = ~weight, fpc = ~fpc,
                          data = df)
  cluster_design <- svydesign(ids = ~person, strata = ~stratum, weights = ~weight,
                              nest = TRUE, data = df)
  records <- c(records, paste0(
    "{\"id\": ", id,
    ", \"stratum\": ", vec(df$stratum), ", \"person\": ", vec(df$person),
    ", \"subgroup\": ", vecs(df$subgroup), ", \"truth\": ", vec(df$truth),
    ", \"pred_a\": ", vec(df$pred_a), ", \"pred_b\": ", vec(df$pred_b),
    ", \"weight\": ", vecd(df$weight), ", \"fpc\": ", vecd(df$fpc),
    ", \"fpc_design\": ", differences(fpc_design),
    ", \"cluster_design\": ", differences(cluster_design), "}"))
}
path <- file.path(out_dir, "survey_differences.json")
writeLines(c("[", paste(records, collapse = ",\n"), "]"), path)
cat("wrote", path, "\n")
