$f820b836-188b-422b-9c65-5201526ba7e0ÝÂÔ‡“¢˜"agent:local-agent*$9867b572-91b0-4efd-b5c2-d495036433962,command:9867b572-91b0-4efd-b5c2-d49503643396@Hª›
local-agent$62fb6a1c-9a12-4afc-b73b-8eac985b0174default *
Artificial"cpu*
Artificial"cpu*
Artificial"cpu*
Artificial"cpu2vm:0.1.0