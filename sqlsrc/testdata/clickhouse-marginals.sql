SELECT CAST(c0 AS Nullable(Int64)) AS `race`, CAST(c1 AS Nullable(Int64)) AS `income K`, CAST(NULL AS Nullable(Int64)) AS `age`, toInt64(count()) AS `count`
FROM (SELECT
    CASE WHEN `race` IS NULL THEN toInt64(3) WHEN toString(`race`) = 'NA' THEN toInt64(3) WHEN toString(`race`) = 'a' THEN toInt64(0) WHEN toString(`race`) = 'b\'s' THEN toInt64(1) WHEN toString(`race`) = 'other' THEN toInt64(2) WHEN toString(`race`) = '' THEN toInt64(-1) ELSE toInt64(2) END AS c0,
    CASE WHEN `income K` IS NULL THEN toInt64(-1) WHEN NOT (match(replaceRegexpAll(toString(`income K`), '^[ \t]+|[ \t]+$', ''), '^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?$')) THEN toInt64(-1) WHEN abs(toFloat64OrZero(replaceRegexpAll(toString(`income K`), '^[ \t]+|[ \t]+$', ''))) > toFloat64(1.7976931348623157e+308) THEN toInt64(-1) WHEN toFloat64OrZero(replaceRegexpAll(toString(`income K`), '^[ \t]+|[ \t]+$', '')) <> floor(toFloat64OrZero(replaceRegexpAll(toString(`income K`), '^[ \t]+|[ \t]+$', ''))) THEN toInt64(-1) WHEN toFloat64OrZero(replaceRegexpAll(toString(`income K`), '^[ \t]+|[ \t]+$', '')) < (-10) THEN toInt64(0) WHEN toFloat64OrZero(replaceRegexpAll(toString(`income K`), '^[ \t]+|[ \t]+$', '')) > 99 THEN toInt64(2) ELSE intDiv(toInt64(toFloat64OrZero(replaceRegexpAll(toString(`income K`), '^[ \t]+|[ \t]+$', ''))) - (-10), 50) END AS c1
  FROM `db`.`people`) AS codes
GROUP BY c0, c1
UNION ALL
SELECT CAST(NULL AS Nullable(Int64)) AS `race`, CAST(NULL AS Nullable(Int64)) AS `income K`, CAST(c2 AS Nullable(Int64)) AS `age`, toInt64(count()) AS `count`
FROM (SELECT
    CASE WHEN `age` IS NULL THEN toInt64(2) WHEN toString(`age`) = '' THEN toInt64(2) WHEN NOT (match(replaceRegexpAll(toString(`age`), '^[ \t]+|[ \t]+$', ''), '^[+-]?([0-9]+[.]?[0-9]*|[.][0-9]+)([eE][+-]?[0-9]+)?$')) THEN toInt64(-1) WHEN abs(toFloat64OrZero(replaceRegexpAll(toString(`age`), '^[ \t]+|[ \t]+$', ''))) > toFloat64(1.7976931348623157e+308) THEN toInt64(-1) WHEN toFloat64OrZero(replaceRegexpAll(toString(`age`), '^[ \t]+|[ \t]+$', '')) < toFloat64(17) THEN toInt64(0) WHEN toFloat64OrZero(replaceRegexpAll(toString(`age`), '^[ \t]+|[ \t]+$', '')) > toFloat64(91) THEN toInt64(1) WHEN toFloat64OrZero(replaceRegexpAll(toString(`age`), '^[ \t]+|[ \t]+$', '')) < toFloat64(20.5) THEN toInt64(0) ELSE toInt64(1) END AS c2
  FROM `db`.`people`) AS codes
GROUP BY c2
UNION ALL
SELECT CAST(NULL AS Nullable(Int64)) AS `race`, CAST(NULL AS Nullable(Int64)) AS `income K`, CAST(NULL AS Nullable(Int64)) AS `age`, toInt64(count()) AS `count`
FROM (SELECT 1 AS one
  FROM `db`.`people`) AS codes
