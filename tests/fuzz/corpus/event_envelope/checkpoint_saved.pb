$0947c7ed-2624-4e63-a041-373b28abee63¼õÊŠ“¢˜"allocation:trial-1-1.1*$f2f41b23-4703-4352-a490-fa365370a6302,command:f2f41b23-4703-4352-a490-fa365370a630@Hâ‡$6074d1c5-b152-4147-b2db-92ab067e9c87 ¬(Ã
2

state.jsonÃ
:7{"harness":"cairn_harness 0.1.0","steps_completed":300}Btrial-1-1.1