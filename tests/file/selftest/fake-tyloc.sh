#!/bin/sh
# Stands in for `tyloc --list-diagnostics` with the mistakes file.coverage must catch:
# an ID registered twice, an ID that is not lowercase-dashed, and an ID without a test.
printf 'syntax\terror\tthe input does not follow the grammar\n'
printf 'syntax\terror\tthe input does not follow the grammar\n'
printf 'Bad_ID\terror\tnot lowercase-dashed\n'
printf 'no-test\terror\tnothing tests this\n'
