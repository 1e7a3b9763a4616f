# Exports the R-package tables shipped in datasets/ as CSV, unchanged (every
# column of each data set but those `drop` names below, or only those `keep`
# names). Run from the repository root with Debian's
# r-cran-aer and r-cran-cardata installed:
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

# package, data set, folder (and CSV name): one row per shipped table.
# fertility's and mplsstops' CSVs are shipped gzip-compressed: compress them
# after a run.
tables <- read.table(header = TRUE, stringsAsFactors = FALSE, text = "
package  set              folder
AER      CPS1988          cps1988
AER      Fertility        fertility
AER      HealthInsurance  healthins
carData  SLID             slid
AER      SmokeBan         smokeban
carData  GSSvocab         gssvocab
carData  Arrests          arrests
AER      DoctorVisits     doctorvisits
AER      HMDA             hmda
carData  WVS              wvs
AER      CollegeDistance  collegedistance
AER      CPSSW8           cpssw8
carData  BEPS             beps
carData  MplsStops        mplsstops
AER      ResumeNames      resumenames
AER      STAR             star
AER      Affairs          affairs
carData  CES11            ces11
AER      PSID1982         psid1982
AER      GSS7402          gss7402
")

# Columns left out of a table (every other table keeps all of its columns, or
# those `keep` lists below):
# MplsStops' incident identifier, its coordinates and its neighbourhood
# (whose 84 or 87 names the documentation does not list); ResumeNames'
# applicant name, its counts of jobs and years of experience (no documented
# bounds), and the employer's and the ad's columns (three factors whose levels
# the documentation does not list, and seven yes/no features of the ad, not
# of the résumé); Affairs' gender (its levels are not listed); CES11's household
# identifier, its province's population and the sampling weight (design
# variables, not answers of the respondent); PSID1982's gender (its levels
# are not listed) and wage (no unit or bound documented); GSS7402's number of
# siblings (no documented bound).
drop <- list(mplsstops = c("idNum", "lat", "long", "neighborhood"),
             affairs = c("gender"),
             ces11 = c("id", "population", "weight"),
             psid1982 = c("gender", "wage"),
             gss7402 = c("siblings"),
             resumenames = c("name", "jobs", "experience", "minimum", "equal", "wanted", "requirements",
                             "reqexp", "reqcomm", "reqeduc", "reqcomp", "reqorg", "industry"))

# Columns kept from a wide table (the others are left out): STAR's student
# ethnicity, its class type in each grade, and the kindergarten's school type,
# teacher's degree and career-ladder level. Left out: the test scores, the
# teachers' years of experience and the birth quarter (no documented bounds),
# gender and free lunch (levels not listed), the school and school-system
# identifiers (not listed), and the teachers' ethnicity and the later grades'
# school, degree and ladder columns (documented, but left out so that the
# workload stays at the size of the suite's tables).
keep <- list(star = c("ethnicity", "stark", "star1", "star2", "star3", "schoolk", "degreek", "ladderk"))

for (i in seq_len(nrow(tables))) {
  e <- new.env()
  data(list = tables$set[i], package = tables$package[i], envir = e)
  d <- get(tables$set[i], envir = e)
  d <- d[, setdiff(names(d), drop[[tables$folder[i]]]), drop = FALSE]
  if (!is.null(keep[[tables$folder[i]]])) d <- d[, keep[[tables$folder[i]]], drop = FALSE]
  out(d, file.path("datasets", tables$folder[i]), paste0(tables$folder[i], ".csv"))
}
