# Exports the R-package tables shipped in datasets/ as CSV, unchanged except
# for the column selection stated below. Run from the repository root with
# Debian's r-cran-aer and r-cran-cardata installed:
#
#   Rscript datasets/r/export.R
#
# Rows are written in the package's order; factors as their level labels;
# numbers as R prints them (up to 15 significant digits); missing values as NA.
suppressMessages({
  library(AER)
  library(carData)
})

out <- function(d, dir, file) {
  dir.create(dir, showWarnings = FALSE, recursive = TRUE)
  write.csv(d, file.path(dir, file), row.names = FALSE, quote = FALSE, na = "NA")
  cat(sprintf("%s: %d rows, %d columns\n", file.path(dir, file), nrow(d), ncol(d)))
}

e <- new.env()
data("CPS1988", package = "AER", envir = e)
out(e$CPS1988, "datasets/cps1988", "cps1988.csv")

data("Fertility", package = "AER", envir = e)
out(e$Fertility, "datasets/fertility", "fertility.csv")

data("HealthInsurance", package = "AER", envir = e)
out(e$HealthInsurance, "datasets/healthins", "healthins.csv")

data("SLID", package = "carData", envir = e)
out(e$SLID, "datasets/slid", "slid.csv")

data("SmokeBan", package = "AER", envir = e)
out(e$SmokeBan, "datasets/smokeban", "smokeban.csv")

data("GSSvocab", package = "carData", envir = e)
out(e$GSSvocab, "datasets/gssvocab", "gssvocab.csv")

data("Arrests", package = "carData", envir = e)
out(e$Arrests, "datasets/arrests", "arrests.csv")

data("DoctorVisits", package = "AER", envir = e)
out(e$DoctorVisits, "datasets/doctorvisits", "doctorvisits.csv")
